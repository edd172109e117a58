/**
 * The headers suppliers give each API field, in several languages (rules as data): what `mapping init` matches a
 * sheet's headers against, after normalisation (case, accents, punctuation, spaces). Order matters twice: the fields
 * most sheets have come first (the console mapper's dropdown lists them first), and within a field, nothing.
 */
import type { ColumnType } from '../pipeline/map/transforms.ts';

/** The languages of the alias table. */
export const ALIAS_LANGUAGES = ['en', 'fr', 'de', 'es', 'it', 'nl'] as const;

/** One of the alias table's languages. */
export type AliasLanguage = (typeof ALIAS_LANGUAGES)[number];

/** The mapping language a sheet gets when its headers are mostly in that language. */
export const LANGUAGE_TAGS: Readonly<Record<AliasLanguage, string>> = {
  en: 'en-US',
  fr: 'fr-FR',
  de: 'de-DE',
  es: 'es-ES',
  it: 'it-IT',
  nl: 'nl-NL',
};

/**
 * What a column's cells should look like for a field; the samples are checked against it (sample-kinds.ts).
 * `text`: anything; `words`: text with a letter (names); the others as their names say.
 */
export type ValueKind =
  | 'gtin'
  | 'number'
  | 'unit'
  | 'weightUnit'
  | 'country'
  | 'uuid'
  | 'boolean'
  | 'date'
  | 'hsCode'
  | 'languageCode'
  | 'words'
  | 'text';

/** A lookup as a mapping file writes it. */
export type MappingLookup = 'harmonized-code' | { list: string } | { brand: { create: boolean } } | { kind: string };

/** The headers of one field, with how its column is read. */
export interface FieldAliases {
  /** Field path (checked against the target's fields by resolveFieldPath: a field the target lacks is skipped). */
  field: string;
  /** Column type when it is not the field's default (mapping.ts). */
  type?: ColumnType;
  lookup?: MappingLookup;
  /** What the samples should look like, when the type does not say it (a language code, a name). */
  expects?: ValueKind;
  /**
   * The object a column of quantities (`400g`, `1,5 L`) under such a header feeds instead, its number and unit split
   * (`type: quantity`): the net content, which the API reads, rather than its text.
   */
  quantity?: string;
  /** Headers by language; a header written the same way in several languages is listed in each. */
  aliases: Partial<Record<AliasLanguage, readonly string[]>>;
}

/** The fields supplier sheets carry, most common first, with their headers in en, fr, de, es, it and nl. */
export const FIELD_ALIASES: readonly FieldAliases[] = [
  {
    field: 'gtin',
    aliases: {
      en: [
        'GTIN',
        'EAN',
        'EAN13',
        'EAN 13',
        'EAN8',
        'EAN code',
        'GTIN 13',
        'GTIN 14',
        'UPC',
        'UPC code',
        'Barcode',
        'Bar code',
        'Barcode number',
        'Consumer unit barcode',
      ],
      fr: ['Code-barres', 'Code barre', 'Code EAN', 'Code GTIN', 'EAN UVC', 'GTIN UVC', 'Gencod', 'Gencode'],
      de: ['Strichcode', 'EAN-Code', 'EAN-Nummer', 'GTIN-Nummer', 'Barcode'],
      es: ['Código de barras', 'Código EAN', 'Código GTIN'],
      it: ['Codice a barre', 'Codice EAN', 'Codice GTIN'],
      nl: ['Streepjescode', 'EAN-code', 'Barcode'],
    },
  },
  {
    field: 'tradeItemName',
    expects: 'words',
    aliases: {
      en: [
        'Product name',
        'Product',
        'Name',
        'Title',
        'Product title',
        'Item name',
        'Trade item name',
        'Article name',
        'Product description',
        'Designation',
        'Description',
        'Item',
        'Article',
        'Item description',
      ],
      fr: [
        'Désignation',
        'Libellé',
        'Libellé produit',
        'Libellé article',
        'Nom',
        'Nom du produit',
        'Nom produit',
        'Produit',
        'Désignation produit',
        'Désignation article',
        'Article',
        'Libellé ecommerce',
        'Lib ecommerce',
      ],
      de: [
        'Produktname',
        'Bezeichnung',
        'Artikelbezeichnung',
        'Artikelname',
        'Produktbezeichnung',
        'Produkt',
        'Name',
        'Artikel',
      ],
      es: [
        'Nombre del producto',
        'Nombre',
        'Producto',
        'Descripción',
        'Denominación',
        'Nombre de artículo',
        'Artículo',
      ],
      it: ['Nome prodotto', 'Nome del prodotto', 'Nome', 'Prodotto', 'Descrizione', 'Denominazione', 'Articolo'],
      nl: ['Productnaam', 'Naam', 'Product', 'Omschrijving', 'Artikelnaam', 'Benaming', 'Artikel'],
    },
  },
  {
    field: 'brandId',
    lookup: { brand: { create: true } },
    expects: 'words',
    aliases: {
      // A shop's vendor (Shopify's `Vendor`) is the brand it sells under, a name: never the supplier's uuid.
      en: ['Brand', 'Brands', 'Brand name', 'Trademark', 'Vendor'],
      fr: ['Marque', 'Marques', 'Nom de marque', 'Marque commerciale'],
      de: ['Marke', 'Markenname', 'Handelsmarke'],
      es: ['Marca', 'Nombre de marca'],
      it: ['Marca', 'Marchio'],
      nl: ['Merk', 'Merknaam'],
    },
  },
  {
    field: 'netContents[0].value',
    type: 'decimal',
    aliases: {
      en: ['Net weight', 'Net content', 'Net contents', 'Net quantity', 'Weight', 'Net volume', 'Content', 'Contents'],
      fr: [
        'Poids net',
        'Poids',
        'Contenance',
        'Contenu net',
        'Quantité nette',
        'Volume net',
        'Poids net UVC',
        'Mesure nette',
      ],
      de: ['Nettogewicht', 'Nettofüllmenge', 'Füllmenge', 'Nettoinhalt', 'Inhalt', 'Gewicht'],
      es: ['Peso neto', 'Contenido neto', 'Peso', 'Cantidad neta', 'Contenido'],
      it: ['Peso netto', 'Contenuto netto', 'Peso', 'Quantità netta', 'Contenuto'],
      nl: ['Nettogewicht', 'Netto inhoud', 'Nettohoeveelheid', 'Gewicht', 'Inhoud'],
    },
  },
  {
    field: 'netContents[0].unitOfMeasure',
    type: 'unit',
    aliases: {
      en: [
        'Unit',
        'Unit of measure',
        'UOM',
        'Unit of measurement',
        'Net weight unit',
        'Net content unit',
        'Weight unit',
        'Measure unit',
      ],
      fr: [
        'Unité',
        'Unité de mesure',
        'Unité poids net',
        'Unité de contenance',
        'Unité du poids',
        'Unité de poids',
        'Unité mesure nette',
      ],
      de: ['Einheit', 'Maßeinheit', 'Mengeneinheit', 'Gewichtseinheit'],
      es: ['Unidad', 'Unidad de medida', 'Unidad de peso'],
      it: ['Unità', 'Unità di misura', 'Unità di peso'],
      nl: ['Eenheid', 'Maateenheid', 'Gewichtseenheid'],
    },
  },
  {
    field: 'tradeItemStatusId',
    lookup: { list: 'trade-item-status' },
    aliases: {
      en: ['Status', 'Item status', 'Product status', 'Trade item status', 'Article status'],
      fr: ['Statut', 'Statut article', 'Statut produit', 'État', 'Etat article'],
      de: ['Status', 'Artikelstatus', 'Produktstatus'],
      es: ['Estado', 'Estado del artículo', 'Estado del producto'],
      it: ['Stato', 'Stato articolo', 'Stato prodotto'],
      nl: ['Status', 'Artikelstatus', 'Productstatus'],
    },
  },
  {
    field: 'harmonizedCode',
    lookup: 'harmonized-code',
    expects: 'hsCode',
    aliases: {
      en: [
        'HS code',
        'Harmonized code',
        'Harmonised code',
        'HS',
        'Customs code',
        'Customs tariff code',
        'Tariff code',
        'Commodity code',
        'Harmonized system code',
        'CN code',
      ],
      fr: [
        'Nomenclature douanière',
        'Code douanier',
        'Code SH',
        'Code NC',
        'Nomenclature combinée',
        'Code douane',
        'Nomenclature',
      ],
      de: ['Zolltarifnummer', 'Warentarifnummer', 'Zollnummer', 'HS-Code', 'Zolltarif'],
      es: ['Código arancelario', 'Código HS', 'Partida arancelaria', 'Código aduanero'],
      it: ['Codice doganale', 'Codice HS', 'Voce doganale', 'Nomenclatura combinata'],
      nl: ['GN-code', 'Douanecode', 'HS-code', 'Tariefcode', 'Goederencode'],
    },
  },
  {
    field: 'countriesOfOrigin',
    type: 'country',
    aliases: {
      en: ['Country of origin', 'Countries of origin', 'Origin', 'Origin country', 'Country'],
      fr: ["Pays d'origine", 'Origine', 'Pays', "Pays d'origine du produit"],
      de: ['Ursprungsland', 'Herkunftsland', 'Herkunft', 'Ursprung', 'Land'],
      es: ['País de origen', 'Origen', 'País'],
      it: ['Paese di origine', 'Origine', 'Paese', "Paese d'origine"],
      nl: ['Land van herkomst', 'Herkomst', 'Land van oorsprong', 'Land'],
    },
  },
  {
    field: 'supplierCompanyId',
    aliases: {
      en: ['Supplier', 'Supplier id', 'Supplier company', 'Vendor id'],
      fr: ['Fournisseur', 'Id fournisseur', 'Identifiant fournisseur', 'Société fournisseur'],
      de: ['Lieferant', 'Lieferanten-ID', 'Lieferantennummer'],
      es: ['Proveedor', 'Id proveedor'],
      it: ['Fornitore', 'Id fornitore'],
      nl: ['Leverancier', 'Leverancier-id'],
    },
  },
  {
    field: 'comments[0].value',
    aliases: {
      en: ['Comment', 'Comments', 'Remark', 'Remarks', 'Note', 'Notes'],
      fr: ['Commentaire', 'Commentaires', 'Remarque', 'Remarques', 'Observations', 'Observation'],
      de: ['Kommentar', 'Bemerkung', 'Bemerkungen', 'Anmerkung', 'Anmerkungen', 'Hinweis'],
      es: ['Comentario', 'Comentarios', 'Observaciones', 'Nota', 'Notas'],
      it: ['Commento', 'Commenti', 'Note', 'Osservazioni', 'Nota'],
      nl: ['Opmerking', 'Opmerkingen', 'Commentaar', 'Notitie'],
    },
  },
  {
    field: 'packagingFormat',
    lookup: { list: 'packaging-materials' },
    aliases: {
      en: ['Packaging', 'Packaging material', 'Package material', 'Packaging type', 'Package'],
      fr: ['Emballage', "Matériau d'emballage", 'Matériau emballage', "Type d'emballage"],
      de: ['Verpackung', 'Verpackungsmaterial', 'Verpackungsart'],
      es: ['Envase', 'Embalaje', 'Material de envase', 'Material del envase'],
      it: ['Imballaggio', 'Materiale imballaggio', 'Confezione', "Materiale dell'imballaggio"],
      nl: ['Verpakking', 'Verpakkingsmateriaal'],
    },
  },
  {
    field: 'functionalName',
    expects: 'words',
    aliases: {
      en: ['Functional name', 'Generic name', 'Legal name', 'Regulated product name', 'Legal denomination'],
      fr: ['Dénomination générique', 'Dénomination légale', 'Dénomination de vente', 'Nom fonctionnel', 'Dénomination'],
      de: ['Verkehrsbezeichnung', 'Sachbezeichnung', 'Gattungsbezeichnung', 'Rechtliche Bezeichnung'],
      es: ['Denominación legal', 'Nombre genérico', 'Denominación de venta'],
      it: ['Denominazione legale', 'Denominazione di vendita', 'Nome generico'],
      nl: ['Wettelijke benaming', 'Generieke naam', 'Verkoopbenaming'],
    },
  },
  {
    field: 'productLanguage',
    expects: 'languageCode',
    aliases: {
      en: ['Language', 'Product language', 'Main language', 'Label language'],
      fr: ['Langue', 'Langue principale', 'Langue du produit', "Langue de l'étiquette"],
      de: ['Sprache', 'Produktsprache', 'Hauptsprache'],
      es: ['Idioma', 'Idioma del producto', 'Idioma principal'],
      it: ['Lingua', 'Lingua del prodotto', 'Lingua principale'],
      nl: ['Taal', 'Producttaal', 'Hoofdtaal'],
    },
  },
  {
    field: 'drainedNetWeight.value',
    type: 'decimal',
    aliases: {
      en: ['Drained weight', 'Drained net weight'],
      fr: ['Poids égoutté', 'Poids net égoutté'],
      de: ['Abtropfgewicht'],
      es: ['Peso escurrido', 'Peso neto escurrido'],
      it: ['Peso sgocciolato', 'Peso netto sgocciolato'],
      nl: ['Uitlekgewicht', 'Netto uitlekgewicht'],
    },
  },
  {
    field: 'drainedNetWeight.unitOfMeasure',
    aliases: {
      en: ['Drained weight unit'],
      fr: ['Unité poids égoutté', 'Unité du poids égoutté'],
      de: ['Einheit Abtropfgewicht'],
      es: ['Unidad peso escurrido'],
      it: ['Unità peso sgocciolato'],
      nl: ['Eenheid uitlekgewicht'],
    },
  },
  {
    field: 'retailerIdentifiers',
    type: 'identifier',
    aliases: {
      en: [
        'Item code',
        'Article number',
        'SKU',
        'Retailer id',
        'Retailer identifier',
        'Internal code',
        'Item number',
        'Reference',
      ],
      fr: ['Code article', 'Référence', 'Réf', 'Code interne', 'Référence article', 'Référence interne'],
      de: ['Artikelnummer', 'Art.-Nr.', 'Artikel-Nr.', 'Interne Nummer'],
      es: ['Referencia', 'Código de artículo', 'Código interno'],
      it: ['Codice articolo', 'Riferimento', 'Codice interno'],
      nl: ['Artikelnummer', 'Artikelcode', 'Referentie'],
    },
  },
  {
    field: 'variant',
    expects: 'words',
    aliases: {
      en: ['Variant', 'Flavour', 'Flavor', 'Variety'],
      fr: ['Variante', 'Parfum', 'Goût', 'Variété'],
      de: ['Variante', 'Sorte', 'Geschmack', 'Geschmacksrichtung'],
      es: ['Variante', 'Sabor', 'Variedad'],
      it: ['Variante', 'Gusto', 'Varietà'],
      nl: ['Variant', 'Smaak', 'Soort'],
    },
  },
  {
    field: 'productRange',
    expects: 'words',
    aliases: {
      en: ['Range', 'Product range', 'Product line'],
      fr: ['Gamme', 'Gamme produit', 'Ligne de produits'],
      de: ['Sortiment', 'Produktlinie', 'Produktreihe'],
      es: ['Gama', 'Gama de productos', 'Línea de productos'],
      it: ['Gamma', 'Linea', 'Gamma prodotto'],
      nl: ['Assortiment', 'Productlijn'],
    },
  },
  {
    field: 'packagingNetContentDescription',
    quantity: 'netContents[0]',
    aliases: {
      en: ['Quantity', 'Declared quantity', 'Net content description', 'Pack size'],
      fr: ['Quantité', 'Quantité déclarée', 'Description du contenu'],
      de: ['Menge', 'Mengenangabe', 'Packungsgröße'],
      es: ['Cantidad', 'Cantidad declarada'],
      it: ['Quantità', 'Quantità dichiarata'],
      nl: ['Hoeveelheid', 'Verpakkingsgrootte'],
    },
  },
  {
    field: 'manufacturedItemName',
    expects: 'words',
    aliases: {
      en: ['Manufactured item name', 'Manufacturing name', 'Manufacturer product name'],
      fr: ['Fabrication', 'Nom fabrication', 'Désignation fabricant', 'Libellé fabricant'],
      de: ['Herstellerbezeichnung', 'Herstellername des Produkts'],
      es: ['Nombre de fabricación', 'Denominación del fabricante'],
      it: ['Nome di fabbricazione', 'Denominazione del produttore'],
      nl: ['Fabricagenaam', 'Naam fabrikant'],
    },
  },
  {
    field: 'packerCompanyId',
    aliases: {
      en: ['Packer', 'Packer id', 'Packed by'],
      fr: ['Emballeur', 'Conditionneur', 'Conditionné par', 'Emballé par'],
      de: ['Abpacker', 'Verpacker', 'Abgepackt von'],
      es: ['Envasador', 'Envasado por'],
      it: ['Confezionatore', 'Confezionato da'],
      nl: ['Verpakker', 'Verpakt door'],
    },
  },
  {
    field: 'targetMarketsList[0].countryCodes',
    type: 'country',
    aliases: {
      en: ['Target market', 'Target markets', 'Sales countries', 'Market'],
      fr: ['Marché cible', 'Marchés cibles', 'Pays de vente', 'Pays de commercialisation', 'Marché'],
      de: ['Zielmarkt', 'Zielmärkte', 'Verkaufsländer'],
      es: ['Mercado objetivo', 'Mercados', 'Países de venta'],
      it: ['Mercato di destinazione', 'Mercati', 'Paesi di vendita'],
      nl: ['Doelmarkt', 'Doelmarkten', 'Verkooplanden'],
    },
  },
  {
    field: 'manufacturedItemStatusId',
    lookup: { list: 'trade-item-status' },
    aliases: {
      en: ['Manufactured item status', 'Manufacturing status'],
      fr: ['Statut fabrication', 'Statut de fabrication'],
      de: ['Herstellungsstatus'],
      es: ['Estado de fabricación'],
      it: ['Stato di fabbricazione'],
      nl: ['Productiestatus'],
    },
  },
  {
    field: 'isTradeItemSeasonal',
    type: 'boolean',
    aliases: {
      en: ['Seasonal', 'Seasonal item', 'Is seasonal'],
      fr: ['Saisonnier', 'Produit saisonnier', 'Article saisonnier'],
      de: ['Saisonal', 'Saisonartikel'],
      es: ['De temporada', 'Estacional'],
      it: ['Stagionale', 'Articolo stagionale'],
      nl: ['Seizoensgebonden', 'Seizoensartikel'],
    },
  },
  {
    field: 'seasonalAvailabilityStartDate',
    type: 'date',
    aliases: {
      en: ['Season start', 'Start of season', 'Seasonal start date', 'Availability start date'],
      fr: ['Début de saison', 'Date de début de saison', 'Début saison'],
      de: ['Saisonbeginn', 'Saisonstart', 'Beginn der Saison'],
      es: ['Inicio de temporada', 'Fecha de inicio de temporada'],
      it: ['Inizio stagione', 'Data inizio stagione'],
      nl: ['Begin seizoen', 'Start seizoen'],
    },
  },
  {
    field: 'seasonalAvailabilityEndDate',
    type: 'date',
    aliases: {
      en: ['Season end', 'End of season', 'Seasonal end date', 'Availability end date'],
      fr: ['Fin de saison', 'Date de fin de saison', 'Fin saison'],
      de: ['Saisonende', 'Ende der Saison'],
      es: ['Fin de temporada', 'Fecha de fin de temporada'],
      it: ['Fine stagione', 'Data fine stagione'],
      nl: ['Einde seizoen', 'Eind seizoen'],
    },
  },
  {
    field: 'isConsumerUnit',
    type: 'boolean',
    aliases: {
      en: ['Consumer unit', 'Is consumer unit'],
      fr: ['Unité consommateur', 'UVC'],
      de: ['Verbrauchereinheit'],
      es: ['Unidad de consumo'],
      it: ['Unità consumatore'],
      nl: ['Consumenteneenheid'],
    },
  },
  {
    field: 'isTradeItemBaseUnit',
    type: 'boolean',
    aliases: {
      en: ['Base unit', 'Is base unit'],
      fr: ['Unité de base'],
      de: ['Basiseinheit'],
      es: ['Unidad base'],
      it: ['Unità di base'],
      nl: ['Basiseenheid'],
    },
  },
  {
    field: 'isTradeItemVariableUnit',
    type: 'boolean',
    aliases: {
      en: ['Variable weight', 'Variable measure', 'Variable unit'],
      fr: ['Poids variable', 'Unité variable'],
      de: ['Variables Gewicht', 'Variable Menge'],
      es: ['Peso variable'],
      it: ['Peso variabile'],
      nl: ['Variabel gewicht'],
    },
  },
  {
    field: 'multipack',
    aliases: {
      en: ['Multipack', 'Multi pack'],
      fr: ['Multipack', 'Lot multiple'],
      de: ['Mehrstückpackung', 'Multipack'],
      es: ['Pack múltiple', 'Multipack'],
      it: ['Confezione multipla', 'Multipack'],
      nl: ['Multiverpakking', 'Multipack'],
    },
  },
  {
    field: 'manufacturingPeriod',
    aliases: {
      en: ['Manufacturing period', 'Production period'],
      fr: ['Période de fabrication', 'Période de production'],
      de: ['Herstellungszeitraum', 'Produktionszeitraum'],
      es: ['Periodo de fabricación'],
      it: ['Periodo di produzione'],
      nl: ['Productieperiode'],
    },
  },
];

/** Headers sheets often carry that no field of the product API takes: `mapping init` says so instead of guessing. */
export const HEADERS_WITHOUT_FIELD: readonly {
  what: string;
  aliases: Partial<Record<AliasLanguage, readonly string[]>>;
}[] = [
  {
    what: 'allergens',
    aliases: {
      en: ['Allergens', 'Allergen', 'Allergen statement', 'Contains'],
      fr: ['Allergènes', 'Allergène', 'Présence d’allergènes'],
      de: ['Allergene', 'Allergen'],
      es: ['Alérgenos', 'Alérgeno'],
      it: ['Allergeni', 'Allergene'],
      nl: ['Allergenen', 'Allergeen'],
    },
  },
  {
    what: 'ingredients',
    aliases: {
      en: ['Ingredients', 'Ingredient list', 'Ingredient statement'],
      fr: ['Ingrédients', 'Liste des ingrédients', 'Composition'],
      de: ['Zutaten', 'Zutatenliste'],
      es: ['Ingredientes'],
      it: ['Ingredienti'],
      nl: ['Ingrediënten'],
    },
  },
  {
    what: 'prices',
    aliases: {
      en: ['Price', 'Unit price', 'Retail price', 'Cost'],
      fr: ['Prix', 'Prix unitaire', 'Prix de vente', 'Tarif', 'PVC'],
      de: ['Preis', 'Einzelpreis', 'Verkaufspreis'],
      es: ['Precio', 'Precio unitario'],
      it: ['Prezzo', 'Prezzo unitario'],
      nl: ['Prijs', 'Eenheidsprijs'],
    },
  },
  {
    what: 'nutrition values',
    aliases: {
      en: [
        'Nutrition',
        'Nutritional values',
        'Nutrition facts',
        'Energy',
        'Energy kcal',
        'Energy kJ',
        'Fat',
        'Saturated fat',
        'Carbohydrates',
        'Sugars',
        'Fibre',
        'Fiber',
        'Salt',
        'Sodium',
        'Proteins',
        'Protein',
        'Alcohol',
        'per 100 g',
        'per 100 ml',
        'Nutri-Score',
        'Vitamin',
        'Vitamins',
        'Cholesterol',
        'Calcium',
        'Iron',
        'Potassium',
        'Magnesium',
      ],
      fr: [
        'Valeurs nutritionnelles',
        'Énergie',
        'Matières grasses',
        'Acides gras saturés',
        'Glucides',
        'Sucres',
        'Fibres',
        'Fibres alimentaires',
        'Sel',
        'Protéines',
        'Alcool',
        'pour 100 g',
        'pour 100 ml',
        'Vitamine',
        'Vitamines',
        'Cholestérol',
        'Fer',
      ],
      de: [
        'Nährwerte',
        'Brennwert',
        'Energie',
        'Fett',
        'Gesättigte Fettsäuren',
        'Kohlenhydrate',
        'Zucker',
        'Ballaststoffe',
        'Salz',
        'Eiweiß',
        'pro 100 g',
        'je 100 g',
      ],
      es: [
        'Valores nutricionales',
        'Energía',
        'Grasas',
        'Grasas saturadas',
        'Hidratos de carbono',
        'Azúcares',
        'Fibra',
        'Sal',
        'Proteínas',
        'por 100 g',
      ],
      it: [
        'Valori nutrizionali',
        'Energia',
        'Grassi',
        'Grassi saturi',
        'Carboidrati',
        'Zuccheri',
        'Fibre',
        'Sale',
        'Proteine',
        'per 100 g',
      ],
      nl: [
        'Voedingswaarden',
        'Energie',
        'Vetten',
        'Verzadigde vetten',
        'Koolhydraten',
        'Suikers',
        'Vezels',
        'Zout',
        'Eiwitten',
        'per 100 g',
      ],
    },
  },
  {
    what: 'GLNs (location numbers, not GTINs)',
    aliases: {
      en: ['GLN', 'Global location number', 'GLN supplier'],
      fr: ['GLN fournisseur', 'Code GLN'],
      de: ['GLN Lieferant'],
      es: ['Código GLN'],
      it: ['Codice GLN'],
      nl: ['GLN-code'],
    },
  },
  {
    what: 'gross weights',
    aliases: {
      en: ['Gross weight'],
      fr: ['Poids brut'],
      de: ['Bruttogewicht'],
      es: ['Peso bruto'],
      it: ['Peso lordo'],
      nl: ['Brutogewicht'],
    },
  },
  {
    what: 'dimensions',
    aliases: {
      en: ['Height', 'Width', 'Depth', 'Length', 'Dimensions'],
      fr: ['Hauteur', 'Largeur', 'Profondeur', 'Longueur', 'Dimensions'],
      de: ['Höhe', 'Breite', 'Tiefe', 'Länge', 'Abmessungen'],
      es: ['Alto', 'Ancho', 'Profundidad', 'Largo', 'Dimensiones'],
      it: ['Altezza', 'Larghezza', 'Profondità', 'Lunghezza', 'Dimensioni'],
      nl: ['Hoogte', 'Breedte', 'Diepte', 'Lengte', 'Afmetingen'],
    },
  },
  {
    what: 'search engine texts (SEO), not the product name or description',
    aliases: {
      en: ['SEO', 'SEO title', 'SEO description', 'SEO keywords', 'Meta title', 'Meta description'],
    },
  },
  {
    // Shopify's `Variant Grams` and `Variant Weight Unit` weigh the parcel for shipping rates: not the net content.
    what: 'shipping weights',
    aliases: {
      en: ['Variant grams', 'Variant weight', 'Variant weight unit', 'Shipping weight'],
    },
  },
  {
    what: 'images',
    aliases: {
      en: ['Image', 'Image URL', 'Picture', 'Photo'],
      fr: ['Image', 'Photo', 'Visuel'],
      de: ['Bild', 'Foto'],
      es: ['Imagen', 'Foto'],
      it: ['Immagine', 'Foto'],
      nl: ['Afbeelding', 'Foto'],
    },
  },
];

/**
 * Words that, first in a header of several words, say whose the rest is, not what it is: Shopify's `Variant SKU`,
 * `Variant Barcode` are the SKU and barcode of a variant. Such a header is matched without them, never as the field
 * the word alone names (`variant`).
 */
export const HEADER_QUALIFIERS: readonly string[] = ['Variant'];
