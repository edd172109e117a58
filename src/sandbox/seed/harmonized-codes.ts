// Harmonized System (WCO, HS 2022 edition) Sections I–IV: chapters 01–24, all their 4-digit headings and a few
// 6-digit subheadings. English wording follows the WCO nomenclature, shortened where it runs long (marked "…").
// French follows the official French version of the nomenclature (as in the EU Combined Nomenclature), given
// for the chapters and for the headings where we have it; the others deliberately have no fr-FR name.
import { names, seedId, type SeedRecord } from './seed-id.ts';

/** [code, English, French?]: 2 digits = chapter, 4 = heading, 6 = subheading. */
export const HS_CODES: readonly (readonly [string, string, string?])[] = [
  ['01', 'Live animals', 'Animaux vivants'],
  ['0101', 'Live horses, asses, mules and hinnies', 'Chevaux, ânes, mulets et bardots, vivants'],
  ['0102', 'Live bovine animals', 'Animaux vivants de l’espèce bovine'],
  ['0103', 'Live swine', 'Animaux vivants de l’espèce porcine'],
  ['0104', 'Live sheep and goats', 'Animaux vivants des espèces ovine ou caprine'],
  [
    '0105',
    'Live poultry, that is to say, fowls of the species Gallus domesticus, ducks, geese, turkeys and guinea fowls',
    'Coqs, poules, canards, oies, dindons, dindes et pintades, vivants, des espèces domestiques',
  ],
  ['0106', 'Other live animals', 'Autres animaux vivants'],

  ['02', 'Meat and edible meat offal', 'Viandes et abats comestibles'],
  [
    '0201',
    'Meat of bovine animals, fresh or chilled',
    'Viandes des animaux de l’espèce bovine, fraîches ou réfrigérées',
  ],
  ['0202', 'Meat of bovine animals, frozen', 'Viandes des animaux de l’espèce bovine, congelées'],
  [
    '0203',
    'Meat of swine, fresh, chilled or frozen',
    'Viandes des animaux de l’espèce porcine, fraîches, réfrigérées ou congelées',
  ],
  [
    '0204',
    'Meat of sheep or goats, fresh, chilled or frozen',
    'Viandes des animaux des espèces ovine ou caprine, fraîches, réfrigérées ou congelées',
  ],
  [
    '0205',
    'Meat of horses, asses, mules or hinnies, fresh, chilled or frozen',
    'Viandes des animaux des espèces chevaline, asine ou mulassière, fraîches, réfrigérées ou congelées',
  ],
  [
    '0206',
    'Edible offal of bovine animals, swine, sheep, goats, horses, asses, mules or hinnies, fresh, chilled or frozen',
  ],
  [
    '0207',
    'Meat and edible offal, of the poultry of heading 01.05, fresh, chilled or frozen',
    'Viandes et abats comestibles des volailles du n° 01.05, frais, réfrigérés ou congelés',
  ],
  [
    '0208',
    'Other meat and edible meat offal, fresh, chilled or frozen',
    'Autres viandes et abats comestibles, frais, réfrigérés ou congelés',
  ],
  [
    '0209',
    'Pig fat, free of lean meat, and poultry fat, not rendered or otherwise extracted, fresh, chilled, frozen, salted, in brine, dried or smoked',
  ],
  [
    '0210',
    'Meat and edible meat offal, salted, in brine, dried or smoked; edible flours and meals of meat or meat offal',
    'Viandes et abats comestibles, salés ou en saumure, séchés ou fumés; farines et poudres, comestibles, de viandes ou d’abats',
  ],

  [
    '03',
    'Fish and crustaceans, molluscs and other aquatic invertebrates',
    'Poissons et crustacés, mollusques et autres invertébrés aquatiques',
  ],
  ['0301', 'Live fish', 'Poissons vivants'],
  [
    '0302',
    'Fish, fresh or chilled, excluding fish fillets and other fish meat of heading 03.04',
    'Poissons frais ou réfrigérés, à l’exception des filets de poissons et autre chair de poissons du n° 03.04',
  ],
  [
    '0303',
    'Fish, frozen, excluding fish fillets and other fish meat of heading 03.04',
    'Poissons congelés, à l’exception des filets de poissons et autre chair de poissons du n° 03.04',
  ],
  [
    '0304',
    'Fish fillets and other fish meat (whether or not minced), fresh, chilled or frozen',
    'Filets de poissons et autre chair de poissons (même hachée), frais, réfrigérés ou congelés',
  ],
  ['0305', 'Fish, dried, salted or in brine; smoked fish, whether or not cooked before or during the smoking process'],
  [
    '0306',
    'Crustaceans, whether in shell or not, live, fresh, chilled, frozen, dried, salted or in brine; smoked crustaceans…',
  ],
  [
    '0307',
    'Molluscs, whether in shell or not, live, fresh, chilled, frozen, dried, salted or in brine; smoked molluscs…',
  ],
  [
    '0308',
    'Aquatic invertebrates other than crustaceans and molluscs, live, fresh, chilled, frozen, dried, salted or in brine…',
  ],
  [
    '0309',
    'Flours, meals and pellets of fish, crustaceans, molluscs and other aquatic invertebrates, fit for human consumption',
  ],

  [
    '04',
    "Dairy produce; birds' eggs; natural honey; edible products of animal origin, not elsewhere specified or included",
    'Lait et produits de la laiterie; œufs d’oiseaux; miel naturel; produits comestibles d’origine animale, non dénommés ni compris ailleurs',
  ],
  [
    '0401',
    'Milk and cream, not concentrated nor containing added sugar or other sweetening matter',
    'Lait et crème de lait, non concentrés ni additionnés de sucre ou d’autres édulcorants',
  ],
  [
    '0402',
    'Milk and cream, concentrated or containing added sugar or other sweetening matter',
    'Lait et crème de lait, concentrés ou additionnés de sucre ou d’autres édulcorants',
  ],
  [
    '0403',
    'Yogurt; buttermilk, curdled milk and cream, kephir and other fermented or acidified milk and cream…',
    'Yoghourt; babeurre, lait et crème caillés, képhir et autres laits et crèmes fermentés ou acidifiés…',
  ],
  [
    '0404',
    'Whey; products consisting of natural milk constituents, not elsewhere specified or included',
    'Lactosérum; produits consistant en composants naturels du lait, non dénommés ni compris ailleurs',
  ],
  [
    '0405',
    'Butter and other fats and oils derived from milk; dairy spreads',
    'Beurre et autres matières grasses provenant du lait; pâtes à tartiner laitières',
  ],
  ['0406', 'Cheese and curd', 'Fromages et caillebotte'],
  [
    '040610',
    'Fresh (unripened or uncured) cheese, including whey cheese, and curd',
    'Fromages frais (non affinés), y compris le fromage de lactosérum, et caillebotte',
  ],
  ['040620', 'Grated or powdered cheese, of all kinds', 'Fromages râpés ou en poudre, de tous types'],
  ['040630', 'Processed cheese, not grated or powdered', 'Fromages fondus, autres que râpés ou en poudre'],
  [
    '040640',
    'Blue-veined cheese and other cheese containing veins produced by Penicillium roqueforti',
    'Fromages à pâte persillée et autres fromages présentant des marbrures obtenues en utilisant du Penicillium roqueforti',
  ],
  ['040690', 'Other cheese', 'Autres fromages'],
  [
    '0407',
    "Birds' eggs, in shell, fresh, preserved or cooked",
    'Œufs d’oiseaux, en coquilles, frais, conservés ou cuits',
  ],
  [
    '0408',
    "Birds' eggs, not in shell, and egg yolks, fresh, dried, cooked by steaming or by boiling in water, moulded, frozen or otherwise preserved…",
  ],
  ['0409', 'Natural honey', 'Miel naturel'],
  [
    '0410',
    'Insects and other edible products of animal origin, not elsewhere specified or included',
    'Insectes et autres produits comestibles d’origine animale, non dénommés ni compris ailleurs',
  ],

  [
    '05',
    'Products of animal origin, not elsewhere specified or included',
    'Autres produits d’origine animale, non dénommés ni compris ailleurs',
  ],
  ['0501', 'Human hair, unworked, whether or not washed or scoured; waste of human hair'],
  [
    '0502',
    "Pigs', hogs' or boars' bristles and hair; badger hair and other brush making hair; waste of such bristles or hair",
  ],
  [
    '0504',
    'Guts, bladders and stomachs of animals (other than fish), whole and pieces thereof, fresh, chilled, frozen, salted, in brine, dried or smoked',
  ],
  ['0505', 'Skins and other parts of birds, with their feathers or down, feathers and parts of feathers, and down…'],
  [
    '0506',
    'Bones and horn-cores, unworked, defatted, simply prepared, treated with acid or degelatinised; powder and waste of these products',
  ],
  ['0507', 'Ivory, tortoise-shell, whalebone and whalebone hair, horns, antlers, hooves, nails, claws and beaks…'],
  [
    '0508',
    'Coral and similar materials, unworked or simply prepared; shells of molluscs, crustaceans or echinoderms and cuttle-bone…',
  ],
  [
    '0510',
    'Ambergris, castoreum, civet and musk; cantharides; bile, whether or not dried; glands and other animal products used in pharmaceutical products…',
  ],
  [
    '0511',
    'Animal products not elsewhere specified or included; dead animals of Chapter 1 or 3, unfit for human consumption',
  ],

  [
    '06',
    'Live trees and other plants; bulbs, roots and the like; cut flowers and ornamental foliage',
    'Plantes vivantes et produits de la floriculture',
  ],
  [
    '0601',
    'Bulbs, tubers, tuberous roots, corms, crowns and rhizomes, dormant, in growth or in flower; chicory plants and roots…',
  ],
  ['0602', 'Other live plants (including their roots), cuttings and slips; mushroom spawn'],
  [
    '0603',
    'Cut flowers and flower buds of a kind suitable for bouquets or for ornamental purposes, fresh, dried, dyed, bleached, impregnated or otherwise prepared',
  ],
  [
    '0604',
    'Foliage, branches and other parts of plants, without flowers or flower buds, and grasses, mosses and lichens, for bouquets or ornamental purposes…',
  ],

  ['07', 'Edible vegetables and certain roots and tubers', 'Légumes, plantes, racines et tubercules alimentaires'],
  ['0701', 'Potatoes, fresh or chilled', 'Pommes de terre, à l’état frais ou réfrigéré'],
  ['0702', 'Tomatoes, fresh or chilled', 'Tomates, à l’état frais ou réfrigéré'],
  [
    '0703',
    'Onions, shallots, garlic, leeks and other alliaceous vegetables, fresh or chilled',
    'Oignons, échalotes, aulx, poireaux et autres légumes alliacés, à l’état frais ou réfrigéré',
  ],
  [
    '0704',
    'Cabbages, cauliflowers, kohlrabi, kale and similar edible brassicas, fresh or chilled',
    'Choux, choux-fleurs, choux frisés, choux-raves et produits comestibles similaires du genre Brassica, à l’état frais ou réfrigéré',
  ],
  [
    '0705',
    'Lettuce (Lactuca sativa) and chicory (Cichorium spp.), fresh or chilled',
    'Laitues (Lactuca sativa) et chicorées (Cichorium spp.), à l’état frais ou réfrigéré',
  ],
  [
    '0706',
    'Carrots, turnips, salad beetroot, salsify, celeriac, radishes and similar edible roots, fresh or chilled',
    'Carottes, navets, betteraves à salade, salsifis, céleris-raves, radis et racines comestibles similaires, à l’état frais ou réfrigéré',
  ],
  ['0707', 'Cucumbers and gherkins, fresh or chilled', 'Concombres et cornichons, à l’état frais ou réfrigéré'],
  [
    '0708',
    'Leguminous vegetables, shelled or unshelled, fresh or chilled',
    'Légumes à cosse, écossés ou non, à l’état frais ou réfrigéré',
  ],
  ['0709', 'Other vegetables, fresh or chilled', 'Autres légumes, à l’état frais ou réfrigéré'],
  [
    '0710',
    'Vegetables (uncooked or cooked by steaming or boiling in water), frozen',
    'Légumes, non cuits ou cuits à l’eau ou à la vapeur, congelés',
  ],
  ['0711', 'Vegetables provisionally preserved, but unsuitable in that state for immediate consumption'],
  [
    '0712',
    'Dried vegetables, whole, cut, sliced, broken or in powder, but not further prepared',
    'Légumes secs, même coupés en morceaux ou en tranches ou bien broyés ou pulvérisés, mais non autrement préparés',
  ],
  [
    '0713',
    'Dried leguminous vegetables, shelled, whether or not skinned or split',
    'Légumes à cosse secs, écossés, même décortiqués ou cassés',
  ],
  [
    '0714',
    'Manioc, arrowroot, salep, Jerusalem artichokes, sweet potatoes and similar roots and tubers with high starch or inulin content…',
  ],

  ['08', 'Edible fruit and nuts; peel of citrus fruit or melons', 'Fruits comestibles; écorces d’agrumes ou de melons'],
  [
    '0801',
    'Coconuts, Brazil nuts and cashew nuts, fresh or dried, whether or not shelled or peeled',
    'Noix de coco, noix du Brésil et noix de cajou, fraîches ou sèches, même sans leurs coques ou décortiquées',
  ],
  [
    '0802',
    'Other nuts, fresh or dried, whether or not shelled or peeled',
    'Autres fruits à coque, frais ou secs, même sans leurs coques ou décortiqués',
  ],
  ['0803', 'Bananas, including plantains, fresh or dried', 'Bananes, y compris les plantains, fraîches ou sèches'],
  [
    '0804',
    'Dates, figs, pineapples, avocados, guavas, mangoes and mangosteens, fresh or dried',
    'Dattes, figues, ananas, avocats, goyaves, mangues et mangoustans, frais ou secs',
  ],
  ['0805', 'Citrus fruit, fresh or dried', 'Agrumes, frais ou secs'],
  ['0806', 'Grapes, fresh or dried', 'Raisins, frais ou secs'],
  [
    '0807',
    'Melons (including watermelons) and papaws (papayas), fresh',
    'Melons (y compris les pastèques) et papayes, frais',
  ],
  ['0808', 'Apples, pears and quinces, fresh', 'Pommes, poires et coings, frais'],
  [
    '0809',
    'Apricots, cherries, peaches (including nectarines), plums and sloes, fresh',
    'Abricots, cerises, pêches (y compris les brugnons et nectarines), prunes et prunelles, frais',
  ],
  ['0810', 'Other fruit, fresh', 'Autres fruits frais'],
  [
    '0811',
    'Fruit and nuts, uncooked or cooked by steaming or boiling in water, frozen, whether or not containing added sugar or other sweetening matter',
  ],
  ['0812', 'Fruit and nuts, provisionally preserved, but unsuitable in that state for immediate consumption'],
  [
    '0813',
    'Fruit, dried, other than that of headings 08.01 to 08.06; mixtures of nuts or dried fruits of this Chapter',
  ],
  ['0814', 'Peel of citrus fruit or melons (including watermelons), fresh, frozen, dried or provisionally preserved'],

  ['09', 'Coffee, tea, maté and spices', 'Café, thé, maté et épices'],
  [
    '0901',
    'Coffee, whether or not roasted or decaffeinated; coffee husks and skins; coffee substitutes containing coffee in any proportion',
    'Café, même torréfié ou décaféiné; coques et pellicules de café; succédanés du café contenant du café, quelles que soient les proportions du mélange',
  ],
  ['090121', 'Coffee, roasted, not decaffeinated', 'Café torréfié, non décaféiné'],
  ['0902', 'Tea, whether or not flavoured', 'Thé, même aromatisé'],
  ['0903', 'Maté', 'Maté'],
  [
    '0904',
    'Pepper of the genus Piper; dried or crushed or ground fruits of the genus Capsicum or of the genus Pimenta',
    'Poivre (du genre Piper); piments du genre Capsicum ou du genre Pimenta, séchés ou broyés ou pulvérisés',
  ],
  ['0905', 'Vanilla', 'Vanille'],
  ['0906', 'Cinnamon and cinnamon-tree flowers', 'Cannelle et fleurs de cannelier'],
  ['0907', 'Cloves (whole fruit, cloves and stems)', 'Girofles (antofles, clous et griffes)'],
  ['0908', 'Nutmeg, mace and cardamoms', 'Noix muscades, macis, amomes et cardamomes'],
  ['0909', 'Seeds of anise, badian, fennel, coriander, cumin or caraway; juniper berries'],
  [
    '0910',
    'Ginger, saffron, turmeric (curcuma), thyme, bay leaves, curry and other spices',
    'Gingembre, safran, curcuma, thym, feuilles de laurier, curry et autres épices',
  ],

  ['10', 'Cereals', 'Céréales'],
  ['1001', 'Wheat and meslin', 'Froment (blé) et méteil'],
  ['1002', 'Rye', 'Seigle'],
  ['1003', 'Barley', 'Orge'],
  ['1004', 'Oats', 'Avoine'],
  ['1005', 'Maize (corn)', 'Maïs'],
  ['1006', 'Rice', 'Riz'],
  ['1007', 'Grain sorghum', 'Sorgho à grains'],
  ['1008', 'Buckwheat, millet and canary seeds; other cereals', 'Sarrasin, millet et alpiste; autres céréales'],

  [
    '11',
    'Products of the milling industry; malt; starches; inulin; wheat gluten',
    'Produits de la minoterie; malt; amidons et fécules; inuline; gluten de froment',
  ],
  ['1101', 'Wheat or meslin flour', 'Farines de froment (blé) ou de méteil'],
  [
    '1102',
    'Cereal flours other than of wheat or meslin',
    'Farines de céréales autres que de froment (blé) ou de méteil',
  ],
  ['1103', 'Cereal groats, meal and pellets', 'Gruaux, semoules et agglomérés sous forme de pellets, de céréales'],
  [
    '1104',
    'Cereal grains otherwise worked (for example, hulled, rolled, flaked, pearled, sliced or kibbled)…; germ of cereals',
  ],
  [
    '1105',
    'Flour, meal, powder, flakes, granules and pellets of potatoes',
    'Farine, semoule, poudre, flocons, granulés et agglomérés sous forme de pellets, de pommes de terre',
  ],
  [
    '1106',
    'Flour, meal and powder of the dried leguminous vegetables of heading 07.13, of sago or of roots or tubers of heading 07.14 or of the products of Chapter 8',
  ],
  ['1107', 'Malt, whether or not roasted', 'Malt, même torréfié'],
  ['1108', 'Starches; inulin', 'Amidons et fécules; inuline'],
  ['1109', 'Wheat gluten, whether or not dried', 'Gluten de froment, même à l’état sec'],

  [
    '12',
    'Oil seeds and oleaginous fruits; miscellaneous grains, seeds and fruit; industrial or medicinal plants; straw and fodder',
    'Graines et fruits oléagineux; graines, semences et fruits divers; plantes industrielles ou médicinales; pailles et fourrages',
  ],
  ['1201', 'Soya beans, whether or not broken', 'Fèves de soja, même concassées'],
  [
    '1202',
    'Ground-nuts, not roasted or otherwise cooked, whether or not shelled or broken',
    'Arachides non grillées ni autrement cuites, même décortiquées ou concassées',
  ],
  ['1203', 'Copra', 'Coprah'],
  ['1204', 'Linseed, whether or not broken', 'Graines de lin, même concassées'],
  ['1205', 'Rape or colza seeds, whether or not broken', 'Graines de navette ou de colza, même concassées'],
  ['1206', 'Sunflower seeds, whether or not broken', 'Graines de tournesol, même concassées'],
  [
    '1207',
    'Other oil seeds and oleaginous fruits, whether or not broken',
    'Autres graines et fruits oléagineux, même concassés',
  ],
  ['1208', 'Flours and meals of oil seeds or oleaginous fruits, other than those of mustard'],
  ['1209', 'Seeds, fruit and spores, of a kind used for sowing', 'Graines, fruits et spores à ensemencer'],
  ['1210', 'Hop cones, fresh or dried, whether or not ground, powdered or in the form of pellets; lupulin'],
  [
    '1211',
    'Plants and parts of plants (including seeds and fruits), of a kind used primarily in perfumery, in pharmacy or for insecticidal, fungicidal or similar purposes…',
  ],
  ['1212', 'Locust beans, seaweeds and other algae, sugar beet and sugar cane, fresh, chilled, frozen or dried…'],
  ['1213', 'Cereal straw and husks, unprepared, whether or not chopped, ground, pressed or in the form of pellets'],
  [
    '1214',
    'Swedes, mangolds, fodder roots, hay, lucerne (alfalfa), clover, sainfoin, forage kale, lupines, vetches and similar forage products…',
  ],

  [
    '13',
    'Lac; gums, resins and other vegetable saps and extracts',
    'Gommes, résines et autres sucs et extraits végétaux',
  ],
  [
    '1301',
    'Lac; natural gums, resins, gum-resins and oleoresins (for example, balsams)',
    'Gomme laque; gommes, résines, gommes-résines et oléorésines (baumes, par exemple), naturelles',
  ],
  [
    '1302',
    'Vegetable saps and extracts; pectic substances, pectinates and pectates; agar-agar and other mucilages and thickeners…',
  ],

  [
    '14',
    'Vegetable plaiting materials; vegetable products not elsewhere specified or included',
    'Matières à tresser et autres produits d’origine végétale, non dénommés ni compris ailleurs',
  ],
  [
    '1401',
    'Vegetable materials of a kind used primarily for plaiting (for example, bamboos, rattans, reeds, rushes, osier, raffia…)',
  ],
  [
    '1404',
    'Vegetable products not elsewhere specified or included',
    'Produits végétaux non dénommés ni compris ailleurs',
  ],

  [
    '15',
    'Animal, vegetable or microbial fats and oils and their cleavage products; prepared edible fats; animal or vegetable waxes',
    'Graisses et huiles animales, végétales ou d’origine microbienne et produits de leur dissociation; graisses alimentaires élaborées; cires d’origine animale ou végétale',
  ],
  ['1501', 'Pig fat (including lard) and poultry fat, other than that of heading 02.09 or 15.03'],
  ['1502', 'Fats of bovine animals, sheep or goats, other than those of heading 15.03'],
  [
    '1503',
    'Lard stearin, lard oil, oleostearin, oleo-oil and tallow oil, not emulsified or mixed or otherwise prepared',
  ],
  [
    '1504',
    'Fats and oils and their fractions, of fish or marine mammals, whether or not refined, but not chemically modified',
  ],
  ['1505', 'Wool grease and fatty substances derived therefrom (including lanolin)'],
  ['1506', 'Other animal fats and oils and their fractions, whether or not refined, but not chemically modified'],
  [
    '1507',
    'Soya-bean oil and its fractions, whether or not refined, but not chemically modified',
    'Huile de soja et ses fractions, même raffinées, mais non chimiquement modifiées',
  ],
  [
    '1508',
    'Ground-nut oil and its fractions, whether or not refined, but not chemically modified',
    'Huile d’arachide et ses fractions, même raffinées, mais non chimiquement modifiées',
  ],
  [
    '1509',
    'Olive oil and its fractions, whether or not refined, but not chemically modified',
    'Huile d’olive et ses fractions, même raffinées, mais non chimiquement modifiées',
  ],
  [
    '1510',
    'Other oils and their fractions, obtained solely from olives, whether or not refined, but not chemically modified…',
  ],
  [
    '1511',
    'Palm oil and its fractions, whether or not refined, but not chemically modified',
    'Huile de palme et ses fractions, même raffinées, mais non chimiquement modifiées',
  ],
  [
    '1512',
    'Sunflower-seed, safflower or cotton-seed oil and fractions thereof, whether or not refined, but not chemically modified',
  ],
  [
    '1513',
    'Coconut (copra), palm kernel or babassu oil and fractions thereof, whether or not refined, but not chemically modified',
  ],
  ['1514', 'Rape, colza or mustard oil and fractions thereof, whether or not refined, but not chemically modified'],
  [
    '1515',
    'Other fixed vegetable or microbial fats and oils (including jojoba oil) and their fractions, whether or not refined…',
  ],
  [
    '1516',
    'Animal, vegetable or microbial fats and oils and their fractions, partly or wholly hydrogenated, inter-esterified, re-esterified or elaidinised…',
  ],
  [
    '1517',
    'Margarine; edible mixtures or preparations of animal, vegetable or microbial fats or oils or of fractions of different fats or oils of this Chapter…',
  ],
  [
    '1518',
    'Animal, vegetable or microbial fats and oils and their fractions, boiled, oxidised, dehydrated, sulphurised, blown, polymerised by heat…',
  ],
  ['1520', 'Glycerol, crude; glycerol waters and glycerol lyes'],
  [
    '1521',
    'Vegetable waxes (other than triglycerides), beeswax, other insect waxes and spermaceti, whether or not refined or coloured',
  ],
  ['1522', 'Degras; residues resulting from the treatment of fatty substances or animal or vegetable waxes'],

  [
    '16',
    'Preparations of meat, of fish, of crustaceans, molluscs or other aquatic invertebrates, or of insects',
    'Préparations de viandes, de poissons, de crustacés, de mollusques ou d’autres invertébrés aquatiques, ou d’insectes',
  ],
  [
    '1601',
    'Sausages and similar products, of meat, meat offal, blood or insects; food preparations based on these products',
    'Saucisses, saucissons et produits similaires, de viande, d’abats, de sang ou d’insectes; préparations alimentaires à base de ces produits',
  ],
  [
    '1602',
    'Other prepared or preserved meat, meat offal, blood or insects',
    'Autres préparations et conserves de viande, d’abats, de sang ou d’insectes',
  ],
  ['1603', 'Extracts and juices of meat, fish or crustaceans, molluscs or other aquatic invertebrates'],
  [
    '1604',
    'Prepared or preserved fish; caviar and caviar substitutes prepared from fish eggs',
    'Préparations et conserves de poissons; caviar et ses succédanés préparés à partir d’œufs de poisson',
  ],
  [
    '1605',
    'Crustaceans, molluscs and other aquatic invertebrates, prepared or preserved',
    'Crustacés, mollusques et autres invertébrés aquatiques, préparés ou conservés',
  ],

  ['17', 'Sugars and sugar confectionery', 'Sucres et sucreries'],
  [
    '1701',
    'Cane or beet sugar and chemically pure sucrose, in solid form',
    'Sucres de canne ou de betterave et saccharose chimiquement pur, à l’état solide',
  ],
  [
    '1702',
    'Other sugars, including chemically pure lactose, maltose, glucose and fructose, in solid form; sugar syrups…; artificial honey; caramel',
  ],
  [
    '1703',
    'Molasses resulting from the extraction or refining of sugar',
    'Mélasses résultant de l’extraction ou du raffinage du sucre',
  ],
  [
    '1704',
    'Sugar confectionery (including white chocolate), not containing cocoa',
    'Sucreries sans cacao (y compris le chocolat blanc)',
  ],

  ['18', 'Cocoa and cocoa preparations', 'Cacao et ses préparations'],
  ['1801', 'Cocoa beans, whole or broken, raw or roasted', 'Cacao en fèves et brisures de fèves, bruts ou torréfiés'],
  [
    '1802',
    'Cocoa shells, husks, skins and other cocoa waste',
    'Coques, pellicules (pelures) et autres déchets de cacao',
  ],
  ['1803', 'Cocoa paste, whether or not defatted', 'Pâte de cacao, même dégraissée'],
  ['1804', 'Cocoa butter, fat and oil', 'Beurre, graisse et huile de cacao'],
  [
    '1805',
    'Cocoa powder, not containing added sugar or other sweetening matter',
    'Poudre de cacao, sans addition de sucre ou d’autres édulcorants',
  ],
  [
    '1806',
    'Chocolate and other food preparations containing cocoa',
    'Chocolat et autres préparations alimentaires contenant du cacao',
  ],

  [
    '19',
    "Preparations of cereals, flour, starch or milk; pastrycooks' products",
    'Préparations à base de céréales, de farines, d’amidons, de fécules ou de lait; pâtisseries',
  ],
  [
    '1901',
    'Malt extract; food preparations of flour, groats, meal, starch or malt extract…; food preparations of goods of headings 04.01 to 04.04…',
  ],
  [
    '1902',
    'Pasta, whether or not cooked or stuffed (with meat or other substances) or otherwise prepared…; couscous, whether or not prepared',
    'Pâtes alimentaires, même cuites ou farcies (de viande ou d’autres substances) ou bien autrement préparées…; couscous, même préparé',
  ],
  [
    '1903',
    'Tapioca and substitutes therefor prepared from starch, in the form of flakes, grains, pearls, siftings or in similar forms',
  ],
  [
    '1904',
    'Prepared foods obtained by the swelling or roasting of cereals or cereal products (for example, corn flakes)…',
  ],
  [
    '1905',
    "Bread, pastry, cakes, biscuits and other bakers' wares, whether or not containing cocoa; communion wafers, empty cachets…, sealing wafers, rice paper and similar products",
    'Produits de la boulangerie, de la pâtisserie ou de la biscuiterie, même additionnés de cacao; hosties, cachets vides des types utilisés pour médicaments, pains à cacheter, pâtes séchées de farine, d’amidon ou de fécule en feuilles et produits similaires',
  ],
  ['190531', 'Sweet biscuits', 'Biscuits additionnés d’édulcorants'],

  [
    '20',
    'Preparations of vegetables, fruit, nuts or other parts of plants',
    'Préparations de légumes, de fruits ou d’autres parties de plantes',
  ],
  [
    '2001',
    'Vegetables, fruit, nuts and other edible parts of plants, prepared or preserved by vinegar or acetic acid',
    'Légumes, fruits et autres parties comestibles de plantes, préparés ou conservés au vinaigre ou à l’acide acétique',
  ],
  [
    '2002',
    'Tomatoes prepared or preserved otherwise than by vinegar or acetic acid',
    'Tomates préparées ou conservées autrement qu’au vinaigre ou à l’acide acétique',
  ],
  [
    '2003',
    'Mushrooms and truffles, prepared or preserved otherwise than by vinegar or acetic acid',
    'Champignons et truffes, préparés ou conservés autrement qu’au vinaigre ou à l’acide acétique',
  ],
  [
    '2004',
    'Other vegetables prepared or preserved otherwise than by vinegar or acetic acid, frozen, other than products of heading 20.06',
  ],
  [
    '2005',
    'Other vegetables prepared or preserved otherwise than by vinegar or acetic acid, not frozen, other than products of heading 20.06',
  ],
  [
    '2006',
    'Vegetables, fruit, nuts, fruit-peel and other parts of plants, preserved by sugar (drained, glacé or crystallised)',
  ],
  [
    '2007',
    'Jams, fruit jellies, marmalades, fruit or nut purée and fruit or nut pastes, obtained by cooking, whether or not containing added sugar or other sweetening matter',
    'Confitures, gelées, marmelades, purées et pâtes de fruits ou de fruits à coque, obtenues par cuisson, même additionnées de sucre ou d’autres édulcorants',
  ],
  [
    '2008',
    'Fruit, nuts and other edible parts of plants, otherwise prepared or preserved, whether or not containing added sugar or other sweetening matter or spirit…',
  ],
  [
    '2009',
    'Fruit or nut juices (including grape must and coconut water) and vegetable juices, unfermented and not containing added spirit…',
    'Jus de fruits ou de fruits à coque (y compris les moûts de raisin et l’eau de coco) ou de légumes, non fermentés, sans addition d’alcool…',
  ],

  ['21', 'Miscellaneous edible preparations', 'Préparations alimentaires diverses'],
  [
    '2101',
    'Extracts, essences and concentrates, of coffee, tea or maté and preparations with a basis of these products…; roasted chicory and other roasted coffee substitutes…',
  ],
  [
    '2102',
    'Yeasts (active or inactive); other single-cell micro-organisms, dead (but not including vaccines of heading 30.02); prepared baking powders',
    'Levures (vivantes ou mortes); autres micro-organismes monocellulaires morts (à l’exclusion des vaccins du n° 30.02); poudres à lever préparées',
  ],
  [
    '2103',
    'Sauces and preparations therefor; mixed condiments and mixed seasonings; mustard flour and meal and prepared mustard',
    'Préparations pour sauces et sauces préparées; condiments et assaisonnements, composés; farine de moutarde et moutarde préparée',
  ],
  [
    '2104',
    'Soups and broths and preparations therefor; homogenised composite food preparations',
    'Préparations pour soupes, potages ou bouillons; soupes, potages ou bouillons préparés; préparations alimentaires composites homogénéisées',
  ],
  [
    '2105',
    'Ice cream and other edible ice, whether or not containing cocoa',
    'Glaces de consommation, même contenant du cacao',
  ],
  [
    '2106',
    'Food preparations not elsewhere specified or included',
    'Préparations alimentaires non dénommées ni comprises ailleurs',
  ],

  ['22', 'Beverages, spirits and vinegar', 'Boissons, liquides alcooliques et vinaigres'],
  [
    '2201',
    'Waters, including natural or artificial mineral waters and aerated waters, not containing added sugar or other sweetening matter nor flavoured; ice and snow',
    'Eaux, y compris les eaux minérales naturelles ou artificielles et les eaux gazéifiées, non additionnées de sucre ou d’autres édulcorants ni aromatisées; glace et neige',
  ],
  [
    '2202',
    'Waters, including mineral waters and aerated waters, containing added sugar or other sweetening matter or flavoured, and other non-alcoholic beverages, not including fruit, nut or vegetable juices of heading 20.09',
    'Eaux, y compris les eaux minérales et les eaux gazéifiées, additionnées de sucre ou d’autres édulcorants ou aromatisées, et autres boissons non alcooliques, à l’exclusion des jus de fruits, de fruits à coque ou de légumes du n° 20.09',
  ],
  [
    '220210',
    'Waters, including mineral waters and aerated waters, containing added sugar or other sweetening matter or flavoured',
  ],
  ['2203', 'Beer made from malt', 'Bières de malt'],
  [
    '2204',
    'Wine of fresh grapes, including fortified wines; grape must other than that of heading 20.09',
    'Vins de raisins frais, y compris les vins enrichis en alcool; moûts de raisin autres que ceux du n° 20.09',
  ],
  ['220410', 'Sparkling wine', 'Vins mousseux'],
  [
    '220421',
    'Other wine; grape must with fermentation prevented or arrested by the addition of alcohol: in containers holding 2 l or less',
    'Autres vins; moûts de raisin dont la fermentation a été empêchée ou arrêtée par addition d’alcool: en récipients d’une contenance n’excédant pas 2 l',
  ],
  [
    '2205',
    'Vermouth and other wine of fresh grapes flavoured with plants or aromatic substances',
    'Vermouths et autres vins de raisins frais préparés à l’aide de plantes ou de substances aromatiques',
  ],
  [
    '2206',
    'Other fermented beverages (for example, cider, perry, mead, saké); mixtures of fermented beverages and mixtures of fermented beverages and non-alcoholic beverages…',
    'Autres boissons fermentées (cidre, poiré, hydromel, saké, par exemple); mélanges de boissons fermentées et mélanges de boissons fermentées et de boissons non alcooliques…',
  ],
  [
    '2207',
    'Undenatured ethyl alcohol of an alcoholic strength by volume of 80 % vol or higher; ethyl alcohol and other spirits, denatured, of any strength',
  ],
  [
    '2208',
    'Undenatured ethyl alcohol of an alcoholic strength by volume of less than 80 % vol; spirits, liqueurs and other spirituous beverages',
    'Alcool éthylique non dénaturé d’un titre alcoométrique volumique de moins de 80 % vol; eaux-de-vie, liqueurs et autres boissons spiritueuses',
  ],
  [
    '2209',
    'Vinegar and substitutes for vinegar obtained from acetic acid',
    'Vinaigres comestibles et succédanés de vinaigre comestibles obtenus à partir d’acide acétique',
  ],

  [
    '23',
    'Residues and waste from the food industries; prepared animal fodder',
    'Résidus et déchets des industries alimentaires; aliments préparés pour animaux',
  ],
  [
    '2301',
    'Flours, meals and pellets, of meat or meat offal, of fish or of crustaceans, molluscs or other aquatic invertebrates, unfit for human consumption; greaves',
  ],
  [
    '2302',
    'Bran, sharps and other residues, whether or not in the form of pellets, derived from the sifting, milling or other working of cereals or of leguminous plants',
  ],
  [
    '2303',
    'Residues of starch manufacture and similar residues, beet-pulp, bagasse and other waste of sugar manufacture, brewing or distilling dregs and waste…',
  ],
  [
    '2304',
    'Oil-cake and other solid residues, whether or not ground or in the form of pellets, resulting from the extraction of soya-bean oil',
  ],
  [
    '2305',
    'Oil-cake and other solid residues, whether or not ground or in the form of pellets, resulting from the extraction of ground-nut oil',
  ],
  [
    '2306',
    'Oil-cake and other solid residues… resulting from the extraction of vegetable or microbial fats or oils, other than those of heading 23.04 or 23.05',
  ],
  ['2307', 'Wine lees; argol', 'Lies de vin; tartre brut'],
  [
    '2308',
    'Vegetable materials and vegetable waste, vegetable residues and by-products… of a kind used in animal feeding, not elsewhere specified or included',
  ],
  [
    '2309',
    'Preparations of a kind used in animal feeding',
    'Préparations des types utilisés pour l’alimentation des animaux',
  ],

  [
    '24',
    'Tobacco and manufactured tobacco substitutes; products, whether or not containing nicotine, intended for inhalation without combustion; other nicotine containing products…',
    'Tabacs et succédanés de tabac fabriqués; produits, même contenant de la nicotine, destinés à l’inhalation sans combustion; autres produits contenant de la nicotine…',
  ],
  ['2401', 'Unmanufactured tobacco; tobacco refuse', 'Tabacs bruts ou non fabriqués; déchets de tabac'],
  [
    '2402',
    'Cigars, cheroots, cigarillos and cigarettes, of tobacco or of tobacco substitutes',
    'Cigares (y compris ceux à bouts coupés), cigarillos et cigarettes, en tabac ou en succédanés de tabac',
  ],
  [
    '2403',
    'Other manufactured tobacco and manufactured tobacco substitutes; "homogenised" or "reconstituted" tobacco; tobacco extracts and essences',
  ],
  [
    '2404',
    'Products containing tobacco, reconstituted tobacco, nicotine, or tobacco or nicotine substitutes, intended for inhalation without combustion; other nicotine containing products…',
  ],

  // Chapter 25 is not a food chapter, but heading 2501 (salt) is on many grocery sheets.
  [
    '25',
    'Salt; sulphur; earths and stone; plastering materials, lime and cement',
    'Sel; soufre; terres et pierres; plâtres, chaux et ciments',
  ],
  [
    '2501',
    'Salt (including table salt and denatured salt) and pure sodium chloride, whether or not in aqueous solution or containing added anti-caking or free-flowing agents; sea water',
    'Sel (y compris le sel préparé pour la table et le sel dénaturé) et chlorure de sodium pur, même en solution aqueuse ou additionnés d’agents antiagglomérants ou d’agents assurant une bonne fluidité; eau de mer',
  ],
];

/** The parent of an HS code: heading → chapter, subheading → heading, chapter → null. */
export function hsParentCode(code: string): string | null {
  return code.length === 6 ? code.slice(0, 4) : code.length === 4 ? code.slice(0, 2) : null;
}

/** The harmonized-codes lookup: chapters, headings and subheadings, parentId = the enclosing code. */
export function buildHarmonizedCodes(): SeedRecord[] {
  return HS_CODES.map(([code, en, fr]) => {
    const parent = hsParentCode(code);
    return {
      id: seedId('harmonized-codes', code),
      code,
      names: names(en, fr),
      parentId: parent === null ? null : seedId('harmonized-codes', parent),
      extra: {
        level: code.length === 2 ? 'chapter' : code.length === 4 ? 'heading' : 'subheading',
        edition: 'HS 2022',
      },
    };
  });
}
