// Writes the sample sheets of samples/ (our own made-up data; GTINs carry valid check digits except the
// deliberately damaged ones). Run: npx tsx samples/make-samples.ts
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { gtinCheckDigit } from '../src/pipeline/gtin.ts';

const here = dirname(fileURLToPath(import.meta.url));
const DEMO_SUPPLIER_ID = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';
const OTHER_SUPPLIER_ID = '9a7e4c21-8b3d-4f6a-b1c2-7e8f9a0b1c2d';

/** A GTIN-13 made of a company prefix and an item number, with its check digit. */
const gtin13 = (prefix: string, item: number): string => {
  const body = prefix + String(item).padStart(12 - prefix.length, '0');
  return body + String(gtinCheckDigit(body));
};

interface Product {
  name: string;
  brand: string;
  weight: number;
  unit: string;
  country: string;
  status: 'Actif' | 'Inactif';
  hs: string;
  packaging: string;
}

const PRODUCTS: Product[] = [
  {
    name: 'Comté AOP 18 mois',
    brand: 'Fromagerie des Monts',
    weight: 250,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '0406',
    packaging: 'Papier',
  },
  {
    name: 'Roquefort AOP',
    brand: 'Caves du Larzac',
    weight: 150,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '0406',
    packaging: 'Papier',
  },
  {
    name: 'Parmigiano Reggiano 24 mois',
    brand: 'Casa Emiliana',
    weight: 200,
    unit: 'g',
    country: 'Italie',
    status: 'Actif',
    hs: '0406',
    packaging: 'Polypropylène (PP)',
  },
  {
    name: 'Manchego curado',
    brand: 'La Mancha Real',
    weight: 300,
    unit: 'g',
    country: 'Espagne',
    status: 'Actif',
    hs: '0406',
    packaging: 'Polypropylène (PP)',
  },
  {
    name: 'Galettes pur beurre',
    brand: 'Biscuiterie de Pont-Aven',
    weight: 0.125,
    unit: 'kg',
    country: 'France',
    status: 'Actif',
    hs: '1905',
    packaging: 'Carton',
  },
  {
    name: "Pain d'épices au miel",
    brand: 'Maison Mulot',
    weight: 350,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1905',
    packaging: 'Papier',
  },
  {
    name: 'Crackers au romarin',
    brand: 'Forno Toscano',
    weight: 180,
    unit: 'g',
    country: 'Italie',
    status: 'Inactif',
    hs: '1905',
    packaging: 'Carton',
  },
  {
    name: 'Madeleines de Commercy',
    brand: 'Maison Mulot',
    weight: 250,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1905',
    packaging: 'Carton',
  },
  {
    name: 'Côtes du Rhône rouge 2022',
    brand: 'Domaine des Garrigues',
    weight: 75,
    unit: 'cl',
    country: 'France',
    status: 'Actif',
    hs: '2204',
    packaging: 'Verre',
  },
  {
    name: 'Muscadet Sèvre et Maine',
    brand: 'Domaine de la Loire',
    weight: 75,
    unit: 'cl',
    country: 'France',
    status: 'Actif',
    hs: '2204',
    packaging: 'Verre',
  },
  {
    name: 'Rioja crianza',
    brand: 'Bodegas del Ebro',
    weight: 0.75,
    unit: 'l',
    country: 'Espagne',
    status: 'Actif',
    hs: '2204',
    packaging: 'Verre',
  },
  {
    name: 'Chianti classico',
    brand: 'Fattoria San Lorenzo',
    weight: 75,
    unit: 'cl',
    country: 'Italie',
    status: 'Inactif',
    hs: '2204',
    packaging: 'Verre',
  },
  {
    name: "Huile d'olive vierge extra",
    brand: 'Moulin de Provence',
    weight: 50,
    unit: 'cl',
    country: 'France',
    status: 'Actif',
    hs: '1509',
    packaging: 'Verre',
  },
  {
    name: 'Miel de lavande',
    brand: 'Rucher du Ventoux',
    weight: 500,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '0409',
    packaging: 'Verre',
  },
  {
    name: "Miel d'acacia",
    brand: 'Rucher du Ventoux',
    weight: 250,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '0409',
    packaging: 'Verre',
  },
  {
    name: "Confiture d'abricots",
    brand: 'Les Vergers de Savoie',
    weight: 370,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '2007',
    packaging: 'Verre',
  },
  {
    name: 'Pâte à tartiner noisettes',
    brand: 'Chocolaterie Valrhône',
    weight: 400,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1806',
    packaging: 'Verre',
  },
  {
    name: 'Tablette chocolat noir 70 %',
    brand: 'Chocolaterie Valrhône',
    weight: 100,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1806',
    packaging: 'Papier',
  },
  {
    name: 'Nougat de Montélimar',
    brand: 'Confiserie du Tricastin',
    weight: 200,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1704',
    packaging: 'Carton',
  },
  {
    name: "Calissons d'Aix",
    brand: 'Confiserie du Roy René',
    weight: 250,
    unit: 'g',
    country: 'France',
    status: 'Inactif',
    hs: '1704',
    packaging: 'Carton',
  },
  {
    name: 'Moutarde de Dijon',
    brand: 'Moutarderie Fallot',
    weight: 210,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '2103',
    packaging: 'Verre',
  },
  {
    name: 'Pesto alla genovese',
    brand: 'Casa Emiliana',
    weight: 190,
    unit: 'g',
    country: 'Italie',
    status: 'Actif',
    hs: '2103',
    packaging: 'Verre',
  },
  {
    name: 'Jus de pomme artisanal',
    brand: 'Vergers de Normandie',
    weight: 1,
    unit: 'l',
    country: 'France',
    status: 'Actif',
    hs: '2009',
    packaging: 'Verre',
  },
  {
    name: 'Thé vert Sencha',
    brand: 'Comptoir des Thés',
    weight: 100,
    unit: 'g',
    country: 'DEU',
    status: 'Actif',
    hs: '0902',
    packaging: 'Aluminium',
  },
  {
    name: 'Café moulu pur arabica',
    brand: 'Brûlerie Saint-Martin',
    weight: 250,
    unit: 'g',
    country: 'ES',
    status: 'Actif',
    hs: '0901',
    packaging: 'Aluminium',
  },
  {
    name: 'Pâtes trofie',
    brand: 'Pastificio Ligure',
    weight: 500,
    unit: 'g',
    country: 'Italie',
    status: 'Actif',
    hs: '1902',
    packaging: 'Carton',
  },
  {
    name: 'Amandes grillées salées',
    brand: 'La Mancha Real',
    weight: 125,
    unit: 'g',
    country: 'Espagne',
    status: 'Actif',
    hs: '2008',
    packaging: 'Polypropylène (PP)',
  },
  {
    name: "Sardines à l'huile d'olive",
    brand: 'Conserverie de Quiberon',
    weight: 115,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1604',
    packaging: 'Acier',
  },
  {
    name: 'Rillettes du Mans',
    brand: 'Maison Prunier',
    weight: 220,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '1602',
    packaging: 'Verre',
  },
  {
    name: 'Fleur de sel de Guérande',
    brand: 'Paludiers de Guérande',
    weight: 250,
    unit: 'g',
    country: 'France',
    status: 'Actif',
    hs: '2501',
    packaging: 'Carton',
  },
];

/** samples/fournisseur-produits.xlsx: French headers, numbers and dates as XLSX cells, GTINs and HS codes as text. */
async function fournisseurXlsx(): Promise<void> {
  const wb = new ExcelJS.Workbook();
  wb.creator = 'product-sync samples';
  wb.created = new Date(Date.UTC(2025, 0, 15));
  const ws = wb.addWorksheet('Produits');
  ws.addRow([
    'Code-barres',
    'Désignation',
    'Marque',
    'Poids net',
    'Unité',
    "Pays d'origine",
    'Statut',
    'Nomenclature douanière',
    'Emballage',
    'Saisonnier',
    'Début de saison',
    'Commentaire',
  ]);
  PRODUCTS.forEach((p, i) => {
    const seasonal = i % 7 === 3;
    ws.addRow([
      gtin13('376012345', 100 + i),
      p.name,
      p.brand,
      p.weight,
      p.unit,
      p.country,
      p.status,
      p.hs,
      p.packaging,
      seasonal ? 'Oui' : 'Non',
      seasonal ? new Date(Date.UTC(2025, 9, 1)) : null,
      i % 5 === 0 ? 'Nouveau référencement' : null,
    ]);
  });
  ws.getColumn(1).numFmt = '@';
  ws.getColumn(8).numFmt = '@';
  ws.getColumn(11).numFmt = 'dd/mm/yyyy';
  ws.getRow(1).font = { bold: true };
  await wb.xlsx.writeFile(join(here, 'fournisseur-produits.xlsx'));
}

const frNumber = (n: number): string => String(n).replace('.', ',');

/** samples/epicerie-fine.csv: Windows-1252, ';', decimal commas, dd/mm/yyyy dates, status codes A/I. */
async function epicerieCsv(): Promise<void> {
  const lines = [
    'EAN;Libellé produit;Marque;Contenance;Unité;Statut;Code douanier;Saisonnier;Début de saison;Poids égoutté (g)',
  ];
  PRODUCTS.forEach((p, i) => {
    const drained = p.name.startsWith('Sardines') ? '82,5' : '';
    const seasonal = i % 6 === 2;
    lines.push(
      [
        gtin13('376098765', 200 + i),
        p.name,
        p.brand,
        frNumber(p.weight),
        p.unit,
        p.status === 'Actif' ? 'A' : 'I',
        p.hs,
        seasonal ? 'oui' : 'non',
        seasonal ? `0${1 + (i % 9)}/1${i % 3}/2025` : '',
        drained,
      ]
        .map((c) => (c.includes(';') || c.includes('"') ? `"${c.replace(/"/g, '""')}"` : c))
        .join(';'),
    );
  });
  await writeFile(join(here, 'epicerie-fine.csv'), iconv.encode(lines.join('\r\n') + '\r\n', 'win1252'));
}

/** samples/excel-damaged.csv: what Excel does to a sheet — most rows fine, a few damaged on purpose. */
async function damagedCsv(): Promise<void> {
  const rows: string[][] = [['GTIN', 'Nom', 'Marque', 'Poids', 'Unité', 'Date de lancement']];
  const base = PRODUCTS.slice(0, 20);
  base.forEach((p, i) =>
    rows.push([gtin13('376055544', 300 + i), p.name, p.brand, frNumber(p.weight), p.unit, `2025-0${1 + (i % 9)}-15`]),
  );
  // Row 3: a UPC-A (012345678905) that Excel turned into a number: 11 digits, restored with a warning.
  rows[2]![0] = '12345678905';
  // Row 4: a GTIN-8 (01234565) that lost its leading zero: 7 digits, restored with a warning.
  rows[3]![0] = '1234565';
  // Row 6: scientific notation, digits lost.
  rows[5]![0] = '5,58199E+12';
  // Row 8: a bad check digit (last digit changed).
  const good = rows[7]![0]!;
  rows[7]![0] = good.slice(0, -1) + String((Number(good.slice(-1)) + 1) % 10);
  // Row 10: an unknown unit.
  rows[9]![4] = 'boîte';
  // Row 12: an ambiguous date.
  rows[11]![5] = '03/04/2025';
  // Rows 14 and 18: the same GTIN twice.
  rows[17]![0] = rows[13]![0]!;
  // Row 20: a quantity in the unit column.
  rows[19]![4] = '0,5 kg';
  const text = rows.map((r) => r.join(';')).join('\r\n') + '\r\n';
  await writeFile(join(here, 'excel-damaged.csv'), '\uFEFF' + text, 'utf8');
}

/** samples/cooperative-fabricants.csv: manufactured items, a supplier column and countries in several forms. */
async function fabricantsCsv(): Promise<void> {
  const countries = ['France', 'Italie', 'Espagne', 'ES', 'DEU', 'France;Espagne', 'FRA', 'Allemagne'];
  const rows = [['GTIN', 'Produit', 'Fabrication', 'Fournisseur', "Pays d'origine", 'Poids net', 'Unité', 'Marque']];
  PRODUCTS.slice(0, 24).forEach((p, i) => {
    rows.push([
      gtin13('376044433', 500 + i),
      p.name,
      `${p.name} — lot ${i % 2 === 0 ? 'atelier Nord' : 'atelier Sud'}`,
      i % 4 === 3 ? OTHER_SUPPLIER_ID : DEMO_SUPPLIER_ID,
      countries[i % countries.length]!,
      String(p.weight),
      p.unit,
      p.brand,
    ]);
  });
  const q = (c: string) => (/[",\n;]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  await writeFile(
    join(here, 'cooperative-fabricants.csv'),
    rows.map((r) => r.map(q).join(',')).join('\n') + '\n',
    'utf8',
  );
}

await fournisseurXlsx();
await epicerieCsv();
await damagedCsv();
await fabricantsCsv();
console.log('samples written to', here);
