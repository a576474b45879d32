"""The product types of the generated catalogue: what each type is called, where it sits in the
category tree, which attributes and option groups its products draw from, and its price range.

Vocabulary rules the tests check (they are what keeps the reward honest):

- ``type_words`` of a type occur in the titles of that type only, so buying the wrong kind of
  product gets ``r_type`` 0 however well its attributes read;
- within a type no two attributes, and no two option values, match each other under the reward's
  phrase matching (so meeting one never counts as meeting another);
- a tuple inside ``attributes`` lists alternatives a product has at most one of (long or short
  sleeves).
"""

from __future__ import annotations

from dataclasses import dataclass

Options = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class ProductType:
    """One kind of product; about ``num_products / len(TYPES)`` products are drawn from each."""

    key: str  # what a shopper calls it; the product's ``query`` (upstream's search query field)
    noun: str  # how titles name it
    type_words: tuple[str, ...]  # words only titles of this type contain (the reward's type check)
    path: tuple[str, ...]  # category breadcrumb, most general first
    attributes: tuple[str | tuple[str, ...], ...]
    options: Options
    price: tuple[int, int]  # dollars, inclusive range of list prices
    audience: str = ""  # title prefix such as "Men's"

    @property
    def category(self) -> str:
        return self.path[0]


CLOTHING, ELECTRONICS, HOME = "Clothing, Shoes & Jewelry", "Electronics", "Home & Kitchen"
BEAUTY, GROCERY, SPORTS = "Beauty & Personal Care", "Grocery & Gourmet Food", "Sports & Outdoors"
PETS, OFFICE, TOYS, HEALTH = "Pet Supplies", "Office Products", "Toys & Games", "Health & Household"

APPAREL_COLORS = ("black", "white", "navy", "heather grey", "charcoal", "burgundy", "olive green", "royal blue",
                  "light pink", "khaki")
APPAREL_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large")
BABY_COLORS = ("white", "pastel yellow", "mint green", "sky blue", "heather grey")
SHOE_COLORS = ("black", "white", "grey", "navy", "brown", "taupe", "red", "olive")
MEN_SHOE_SIZES = ("7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12", "13")
WOMEN_SHOE_SIZES = ("5", "5.5", "6", "6.5", "7", "7.5", "8", "8.5", "9", "10")
TECH_COLORS = ("black", "white", "silver", "space grey", "midnight blue")
HOME_COLORS = ("white", "ivory", "beige", "light grey", "dark grey", "navy", "sage green", "dusty rose", "charcoal",
               "teal")
WOOD_COLORS = ("rustic brown", "black", "white", "walnut", "espresso", "natural oak", "grey wash")
KITCHEN_COLORS = ("black", "white", "red", "sage green", "cream", "navy")
GEAR_COLORS = ("black", "navy", "forest green", "orange", "red", "grey", "purple", "teal")

TYPES: tuple[ProductType, ...] = (
    # -- clothing ---------------------------------------------------------------------------------
    ProductType(
        "men's t-shirt", "T-Shirt", ("t-shirt",), (CLOTHING, "Men", "Clothing", "Shirts", "T-Shirts"),
        (("short sleeve", "long sleeve"), ("slim fit", "regular fit"), ("crew neck", "v-neck"), "machine washable",
         "moisture wicking", "tagless collar", "pre-shrunk cotton", "quick drying"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (9, 35), "Men's"),
    ProductType(
        "women's blouse", "Blouse", ("blouse",), (CLOTHING, "Women", "Clothing", "Tops, Tees & Blouses", "Blouses"),
        (("short sleeve", "long sleeve", "sleeveless"), ("loose fit", "slim fit"), "button down", "chiffon fabric",
         "ruffle trim", "office work", "machine washable", "wrinkle resistant"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (15, 45), "Women's"),
    ProductType(
        "men's jeans", "Jeans", ("jeans",), (CLOTHING, "Men", "Clothing", "Jeans"),
        (("slim fit", "relaxed fit", "straight leg"), "stretch denim", ("button fly", "zip fly"), "five pocket",
         "machine washable", "fade resistant", "reinforced seams"),
        (("color", ("dark wash", "light wash", "medium wash", "black", "stonewash")),
         ("size", ("30w x 30l", "32w x 30l", "32w x 32l", "34w x 32l", "36w x 32l", "38w x 34l"))), (25, 70), "Men's"),
    ProductType(
        "women's dress", "Dress", ("dress",), (CLOTHING, "Women", "Clothing", "Dresses"),
        (("maxi length", "midi length", "mini length"), ("short sleeve", "long sleeve", "sleeveless"), "floral print",
         "high waist", "side pockets", "wrap style", "machine washable", "flowy skirt"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (20, 60), "Women's"),
    ProductType(
        "hoodie", "Hoodie", ("hoodie",), (CLOTHING, "Men", "Clothing", "Active", "Hoodies"),
        ("fleece lined", ("pullover style", "full zip"), "kangaroo pocket", "drawstring hood", "machine washable",
         "heavyweight cotton", "ribbed cuffs"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (20, 55), "Unisex"),
    ProductType(
        "women's leggings", "Leggings", ("leggings",), (CLOTHING, "Women", "Clothing", "Active", "Leggings"),
        ("high waist", "tummy control", "squat proof", "four way stretch", "side pockets",
         ("ankle length", "capri length"), "buttery soft", "moisture wicking"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (12, 40), "Women's"),
    ProductType(
        "men's swim trunks", "Swim Trunks", ("trunks",), (CLOTHING, "Men", "Clothing", "Swim", "Swim Trunks"),
        ("quick dry", "mesh lining", "elastic waist", "zipper pocket", "upf 50 protection", "stretch fabric"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (15, 40), "Men's"),
    ProductType(
        "athletic socks", "Athletic Socks", ("socks",), (CLOTHING, "Men", "Clothing", "Socks"),
        ("cushioned sole", "arch compression", "moisture wicking", "odor resistant", "reinforced heel",
         ("crew length", "no show")),
        (("color", ("black", "white", "grey", "assorted")), ("size", ("size 6-9", "size 9-12", "size 12-15")),
         ("pack", ("6 pairs", "10 pairs", "12 pairs"))), (10, 30), "Men's"),
    ProductType(
        "women's cardigan", "Cardigan", ("cardigan",), (CLOTHING, "Women", "Clothing", "Sweaters", "Cardigans"),
        (("open front", "button front"), "chunky knit", "long sleeve", "side pockets", "lightweight knit",
         "machine washable"),
        (("color", APPAREL_COLORS), ("size", APPAREL_SIZES)), (20, 50), "Women's"),
    ProductType(
        "baby bodysuits", "Baby Bodysuits", ("bodysuits",), (CLOTHING, "Baby", "Clothing", "Bodysuits"),
        ("organic cotton", "snap closure", "short sleeve", "tagless", "envelope neckline", "gender neutral"),
        (("color", BABY_COLORS), ("size", ("newborn", "0-3 months", "3-6 months", "6-9 months", "12 months"))),
        (12, 30)),
    # -- shoes ------------------------------------------------------------------------------------
    ProductType(
        "women's running shoes", "Running Shoes", ("running", "shoes"),
        (CLOTHING, "Women", "Shoes", "Athletic", "Running"),
        ("breathable mesh", "arch support", "memory foam insole", "non slip", "lightweight", ("lace up", "slip on"),
         "rubber sole", "shock absorbing"),
        (("color", SHOE_COLORS), ("size", WOMEN_SHOE_SIZES)), (35, 110), "Women's"),
    ProductType(
        "men's sneakers", "Sneakers", ("sneakers",), (CLOTHING, "Men", "Shoes", "Fashion Sneakers"),
        (("canvas upper", "leather upper"), ("low top", "high top"), "cushioned insole", "rubber outsole", "lace up",
         "lightweight", "breathable lining"),
        (("color", SHOE_COLORS), ("size", MEN_SHOE_SIZES)), (30, 90), "Men's"),
    ProductType(
        "women's sandals", "Sandals", ("sandals",), (CLOTHING, "Women", "Shoes", "Sandals"),
        ("open toe", "ankle strap", "arch support", "cushioned footbed", "waterproof", "platform heel",
         "adjustable buckle", "non slip"),
        (("color", SHOE_COLORS), ("size", WOMEN_SHOE_SIZES)), (18, 60), "Women's"),
    ProductType(
        "men's work boots", "Work Boots", ("boots",), (CLOTHING, "Men", "Shoes", "Work & Safety"),
        (("steel toe", "composite toe", "soft toe"), "waterproof leather", "slip resistant", "oil resistant",
         "electrical hazard", "cushioned insole", "lace up"),
        (("color", ("black", "brown", "wheat", "espresso")), ("size", MEN_SHOE_SIZES)), (60, 160), "Men's"),
    ProductType(
        "women's slippers", "House Slippers", ("slippers",), (CLOTHING, "Women", "Shoes", "Slippers"),
        ("memory foam", "fuzzy plush", "indoor outdoor", "anti skid sole", ("open toe", "closed toe"),
         "faux fur lining", "machine washable"),
        (("color", ("black", "grey", "pink", "beige", "wine red")), ("size", ("5-6", "7-8", "9-10", "11-12"))),
        (12, 35), "Women's"),
    # -- electronics ------------------------------------------------------------------------------
    ProductType(
        "wireless earbuds", "Wireless Earbuds", ("earbuds",),
        (ELECTRONICS, "Headphones, Earbuds & Accessories", "Earbuds"),
        ("active noise cancelling", "bluetooth 5.3", "wireless charging case", "ipx7 waterproof", "touch control",
         "long battery life", "built-in microphone", "deep bass"),
        (("color", ("black", "white", "navy blue", "rose pink", "sage green")),), (20, 120)),
    ProductType(
        "bluetooth speaker", "Portable Bluetooth Speaker", ("speaker",),
        (ELECTRONICS, "Portable Audio & Video", "Speakers"),
        ("waterproof", "stereo pairing", "long battery life", "built-in microphone", "deep bass", "led lights",
         "usb c charging"),
        (("color", TECH_COLORS),), (25, 130)),
    ProductType(
        "phone case", "Phone Case", ("phone",), (ELECTRONICS, "Cell Phones & Accessories", "Cases"),
        ("shockproof", "slim design", "wireless charging compatible", "screen protector included",
         "built-in kickstand", "raised edges", "card holder", "clear back"),
        (("color", TECH_COLORS), ("model", ("iphone 14", "iphone 15", "galaxy s23", "galaxy s24", "pixel 8"))),
        (8, 30)),
    ProductType(
        "usb c cable", "USB C Charging Cable", ("cable",), (ELECTRONICS, "Computers & Accessories", "Cables"),
        ("fast charging", "braided nylon", "data sync", "tangle free", "right angle connector", "aluminum housing"),
        (("color", TECH_COLORS), ("length", ("3 ft", "6 ft", "10 ft")), ("pack", ("1 pack", "2 pack", "3 pack"))),
        (6, 25)),
    ProductType(
        "power bank", "Portable Power Bank", ("power", "bank"),
        (ELECTRONICS, "Cell Phones & Accessories", "Chargers", "Power Banks"),
        ("fast charging", "led display", "dual usb output", "slim design", "airline approved", "built-in cords",
         "usb c input"),
        (("color", TECH_COLORS), ("capacity", ("10000mah", "20000mah", "26800mah"))), (15, 60)),
    ProductType(
        "wireless mouse", "Wireless Mouse", ("mouse",),
        (ELECTRONICS, "Computers & Accessories", "Keyboards, Mice & Accessories", "Mice"),
        ("silent click", "ergonomic design", "rechargeable battery", "adjustable dpi", "usb receiver",
         "multi device pairing"),
        (("color", TECH_COLORS),), (10, 45)),
    ProductType(
        "mechanical keyboard", "Mechanical Keyboard", ("keyboard",),
        (ELECTRONICS, "Computers & Accessories", "Keyboards, Mice & Accessories", "Keyboards"),
        ("rgb backlit", "hot swappable", ("full size layout", "tenkeyless layout", "60 percent layout"),
         ("wired usb", "wireless bluetooth"), "detachable cord", "pbt keycaps", "anti ghosting"),
        (("color", ("black", "white", "space grey")), ("switch", ("red switches", "blue switches", "brown switches"))),
        (40, 120)),
    ProductType(
        "smart watch", "Smart Watch", ("watch",), (ELECTRONICS, "Wearable Technology", "Smartwatches"),
        ("heart rate monitor", "sleep tracking", "gps", "water resistant", "long battery life",
         "message notifications", "blood oxygen"),
        (("color", TECH_COLORS),), (30, 150)),
    ProductType(
        "webcam", "Webcam", ("webcam",), (ELECTRONICS, "Computers & Accessories", "Webcams"),
        ("1080p full hd", "built-in microphone", "auto focus", "privacy cover", "wide angle", "plug and play",
         "low light correction"),
        (("color", ("black", "white")),), (20, 80)),
    # -- home & kitchen ---------------------------------------------------------------------------
    ProductType(
        "sheet set", "Sheet Set", ("sheet",), (HOME, "Bedding", "Sheets & Pillowcases", "Sheet & Pillowcase Sets"),
        ("deep pocket", "brushed microfiber", "wrinkle free", "breathable cooling", "hypoallergenic",
         "machine washable", "400 thread count", "fade resistant"),
        (("color", HOME_COLORS), ("size", ("twin", "full", "queen", "king"))), (20, 80)),
    ProductType(
        "bath towels", "Bath Towels", ("towels",), (HOME, "Bath", "Towels", "Bath Towels"),
        ("quick dry", "highly absorbent", "ring spun cotton", "plush", "hotel quality", "lint free",
         "oeko-tex certified"),
        (("color", HOME_COLORS), ("pack", ("set of 2", "set of 4", "set of 6"))), (15, 60)),
    ProductType(
        "throw pillow covers", "Throw Pillow Covers", ("pillow",),
        (HOME, "Home Décor", "Decorative Pillows", "Throw Pillow Covers"),
        ("soft velvet", "hidden zipper", "double sided", "living room", "farmhouse style", "linen texture"),
        (("color", HOME_COLORS), ("size", ("16 x 16 inch", "18 x 18 inch", "20 x 20 inch"))), (8, 30)),
    ProductType(
        "blackout curtains", "Blackout Curtains", ("curtains",), (HOME, "Home Décor", "Window Treatments", "Curtains"),
        ("thermal insulated", "grommet top", "noise reducing", "room darkening", "machine washable", "living room",
         "wrinkle resistant"),
        (("color", HOME_COLORS), ("size", ("52 x 63 inch", "52 x 84 inch", "52 x 95 inch"))), (15, 50)),
    ProductType(
        "coffee mug", "Coffee Mug", ("mug",), (HOME, "Kitchen & Dining", "Dining & Entertaining", "Mugs"),
        ("microwave safe", "dishwasher safe", "large capacity", "lead free", "ceramic glaze", "comfortable handle",
         "gift box"),
        (("color", KITCHEN_COLORS), ("size", ("12 oz", "16 oz", "20 oz"))), (8, 30)),
    ProductType(
        "frying pan", "Frying Pan", ("pan",), (HOME, "Kitchen & Dining", "Cookware", "Pans", "Skillets"),
        ("nonstick coating", "induction compatible", "oven safe", "pfoa free", "stay cool handle", "dishwasher safe",
         "granite stone"),
        (("color", KITCHEN_COLORS), ("size", ("8 inch", "10 inch", "12 inch"))), (15, 60)),
    ProductType(
        "knife set", "Kitchen Knife Set", ("knife",), (HOME, "Kitchen & Dining", "Cutlery", "Knife Block Sets"),
        ("high carbon stainless steel", "ergonomic handle", "bamboo stand", "dishwasher safe", "sharpener included",
         "full tang"),
        (("color", ("black", "silver", "walnut brown")), ("pieces", ("6 piece", "12 piece", "15 piece"))), (25, 90)),
    ProductType(
        "storage baskets", "Storage Baskets", ("baskets",), (HOME, "Storage & Organization", "Baskets & Bins"),
        ("foldable", "woven seagrass", "sturdy handles", "fabric lined", "stackable", "closet organization"),
        (("color", HOME_COLORS), ("pack", ("2 pack", "3 pack", "4 pack"))), (12, 40)),
    ProductType(
        "cordless vacuum", "Cordless Stick Vacuum", ("vacuum",), (HOME, "Vacuums & Floor Care", "Stick Vacuums"),
        ("lightweight", "long runtime", "hepa filter", "pet hair", "wall mounted", "led headlight",
         "detachable battery"),
        (("color", ("grey", "purple", "red", "white")),), (60, 200)),
    ProductType(
        "air purifier", "Air Purifier", ("purifier",), (HOME, "Heating, Cooling & Air Quality", "Air Purifiers"),
        ("true hepa", "quiet operation", "large room", "night light", "timer function", "odor removal"),
        (("color", ("black", "white")),), (40, 180)),
    # -- furniture --------------------------------------------------------------------------------
    ProductType(
        "bookshelf", "Bookshelf", ("bookshelf",), (HOME, "Furniture", "Home Office Furniture", "Bookcases"),
        ("solid wood", "easy assembly", ("3 tier", "4 tier", "5 tier"), "metal frame", "open shelves",
         "anti tip kit", "industrial style"),
        (("color", WOOD_COLORS),), (40, 150)),
    ProductType(
        "coffee table", "Coffee Table", ("table",), (HOME, "Furniture", "Living Room Furniture", "Coffee Tables"),
        ("solid wood", "easy assembly", "storage shelf", "lift top", "mid century modern",
         ("round top", "rectangular top"), "metal legs"),
        (("color", WOOD_COLORS),), (50, 200)),
    ProductType(
        "nightstand", "Nightstand", ("nightstand",), (HOME, "Furniture", "Bedroom Furniture", "Nightstands"),
        ("charging station", ("one drawer", "two drawers"), "open shelf", "easy assembly", "solid wood",
         "small space"),
        (("color", WOOD_COLORS),), (30, 120)),
    ProductType(
        "office chair", "Office Chair", ("chair",), (HOME, "Furniture", "Home Office Furniture", "Office Chairs"),
        ("lumbar support", "adjustable height", "breathable mesh", "padded armrests", "swivel base", "high back",
         "ergonomic design"),
        (("color", ("black", "grey", "white", "blue")),), (60, 250)),
    ProductType(
        "storage ottoman", "Storage Ottoman", ("ottoman",), (HOME, "Furniture", "Living Room Furniture", "Ottomans"),
        (("faux leather", "linen fabric"), "foldable", "hidden storage", "footrest", "tufted top", "living room"),
        (("color", HOME_COLORS), ("size", ("small", "large"))), (30, 120)),
    ProductType(
        "desk lamp", "LED Desk Lamp", ("lamp",), (HOME, "Lighting & Ceiling Fans", "Lamps & Shades", "Desk Lamps"),
        ("dimmable", "usb charging port", "eye caring", "touch control", "adjustable arm", "memory function",
         "auto off timer"),
        (("color", ("black", "white", "silver")),), (15, 60)),
    # -- beauty -----------------------------------------------------------------------------------
    ProductType(
        "shampoo", "Shampoo", ("shampoo",), (BEAUTY, "Hair Care", "Shampoo & Conditioner", "Shampoos"),
        ("sulfate free", "paraben free", "argan oil", "color safe", "dry scalp", "natural ingredients", "volumizing",
         "cruelty free"),
        (("scent", ("coconut", "lavender", "unscented", "citrus")), ("size", ("8 fl oz", "16 fl oz", "33.8 fl oz"))),
        (8, 30)),
    ProductType(
        "lipstick", "Lipstick", ("lipstick",), (BEAUTY, "Makeup", "Lips", "Lipstick"),
        ("long lasting", ("matte finish", "satin finish"), "moisturizing", "cruelty free", "highly pigmented",
         "transfer proof", "hydrating formula"),
        (("color", ("ruby red", "nude beige", "berry wine", "coral", "mauve", "deep plum")),), (6, 25)),
    ProductType(
        "face moisturizer", "Face Moisturizer", ("moisturizer",), (BEAUTY, "Skin Care", "Face", "Moisturizers"),
        ("hyaluronic acid", "sensitive skin", "fragrance free", "spf 30", "oil free", "non comedogenic",
         "anti aging", "dermatologist tested"),
        (("size", ("1.7 fl oz", "2.5 fl oz", "3.4 fl oz")),), (10, 45)),
    ProductType(
        "makeup brush set", "Makeup Brush Set", ("brush",), (BEAUTY, "Tools & Accessories", "Makeup Brushes"),
        ("synthetic bristles", "travel case", "vegan", "cruelty free", "soft dense", "easy clean", "gift box"),
        (("color", ("black", "rose gold", "pink", "white")), ("pieces", ("10 pieces", "14 pieces", "18 pieces"))),
        (10, 35)),
    ProductType(
        "nail polish", "Nail Polish", ("polish",), (BEAUTY, "Foot, Hand & Nail Care", "Nail Polish"),
        ("quick dry", "long lasting", "chip resistant", "gel effect", "non toxic", "high shine", "vegan"),
        (("color", ("cherry red", "ballet pink", "nude", "navy", "lilac", "jet black")),
         ("pack", ("single bottle", "set of 6"))), (5, 25)),
    ProductType(
        "hair dryer", "Hair Dryer", ("dryer",), (BEAUTY, "Hair Care", "Styling Tools", "Hair Dryers"),
        ("ionic technology", "diffuser attachment", "fast drying", "low noise", "foldable handle",
         "ceramic heating", "cool shot button"),
        (("color", ("black", "white", "pink", "purple")),), (20, 90)),
    ProductType(
        "body wash", "Body Wash", ("wash",), (BEAUTY, "Skin Care", "Body", "Body Washes"),
        ("moisturizing", "sulfate free", "natural ingredients", "sensitive skin", "shea butter", "paraben free",
         "dermatologist tested"),
        (("scent", ("lavender", "coconut", "eucalyptus", "unscented", "fresh citrus")),
         ("size", ("16 fl oz", "22 fl oz", "32 fl oz"))), (6, 25)),
    # -- grocery ----------------------------------------------------------------------------------
    ProductType(
        "protein bars", "Protein Bars", ("bars",), (GROCERY, "Snack Foods", "Bars", "Protein Bars"),
        ("gluten free", "high protein", "low sugar", "keto friendly", "non gmo", "individually wrapped",
         "plant based", "no artificial sweeteners"),
        (("flavor", ("chocolate peanut butter", "cookie dough", "salted caramel", "birthday cake",
                     "mint chocolate chip")), ("size", ("12 count", "15 count", "24 count"))), (12, 40)),
    ProductType(
        "beef jerky", "Beef Jerky", ("jerky",), (GROCERY, "Meat & Seafood", "Jerky & Dried Meats"),
        ("high protein", "low fat", "gluten free", "grass fed", "keto friendly", "resealable bag",
         "no added nitrates"),
        (("flavor", ("original", "teriyaki", "peppered", "sweet and hot")), ("size", ("3.25 oz", "8 oz", "16 oz"))),
        (8, 35)),
    ProductType(
        "herbal tea", "Herbal Tea", ("tea",), (GROCERY, "Beverages", "Coffee, Tea & Cocoa", "Tea", "Herbal"),
        ("caffeine free", "usda organic", "non gmo", "individually wrapped", "compostable bags", "kosher"),
        (("flavor", ("chamomile", "peppermint", "ginger lemon", "hibiscus berry", "lavender")),
         ("size", ("20 count", "40 count", "100 count"))), (5, 25)),
    ProductType(
        "olive oil", "Extra Virgin Olive Oil", ("olive",), (GROCERY, "Pantry Staples", "Cooking Oils", "Olive Oil"),
        ("cold pressed", "usda organic", "non gmo", "single origin", "dark glass packaging", "kosher",
         "high polyphenol"),
        (("size", ("16.9 fl oz", "25.3 fl oz", "33.8 fl oz")),), (10, 40)),
    ProductType(
        "dark chocolate", "Dark Chocolate", ("chocolate",), (GROCERY, "Candy & Chocolate", "Chocolate"),
        (("70% cacao", "85% cacao"), "fair trade", "vegan", "sugar free", "individually wrapped", "gluten free",
         "non gmo"),
        (("flavor", ("sea salt", "almond", "orange", "mint", "plain")),
         ("size", ("3.5 oz", "pack of 6", "pack of 12"))),
        (4, 30)),
    ProductType(
        "granola", "Granola", ("granola",), (GROCERY, "Breakfast Foods", "Cereals", "Granola"),
        ("whole grain", "low sugar", "gluten free", "high fiber", "non gmo", "no artificial flavors", "vegan"),
        (("flavor", ("honey almond", "maple pecan", "cinnamon raisin", "cocoa crunch")),
         ("size", ("11 oz", "pack of 4", "pack of 6"))), (5, 25)),
    ProductType(
        "mixed nuts", "Mixed Nuts", ("nuts",), (GROCERY, "Snack Foods", "Nuts & Seeds", "Mixed Nuts"),
        (("unsalted", "lightly salted"), ("roasted", "raw"), "resealable bag", "kosher", "no preservatives",
         "non gmo", "gluten free"),
        (("size", ("16 oz", "30 oz", "40 oz")),), (8, 30)),
    # -- sports & outdoors ------------------------------------------------------------------------
    ProductType(
        "yoga mat", "Yoga Mat", ("mat",), (SPORTS, "Exercise & Fitness", "Yoga", "Mats"),
        ("non slip", "extra thick", "eco friendly", "carrying strap", "alignment lines", "tear resistant",
         "sweat resistant"),
        (("color", GEAR_COLORS), ("thickness", ("1/4 inch", "1/3 inch", "1/2 inch"))), (15, 50)),
    ProductType(
        "water bottle", "Water Bottle", ("bottle",), (SPORTS, "Outdoor Recreation", "Hydration", "Water Bottles"),
        ("bpa free", "double wall insulated", "leak proof", "wide mouth", "dishwasher safe", "straw lid",
         "stainless steel"),
        (("color", GEAR_COLORS), ("size", ("24 oz", "32 oz", "40 oz"))), (12, 40)),
    ProductType(
        "camping tent", "Camping Tent", ("tent",), (SPORTS, "Outdoor Recreation", "Camping & Hiking", "Tents"),
        ("waterproof", "easy setup", "rainfly included", "mesh windows", "carry bag", "double layer"),
        (("color", GEAR_COLORS), ("capacity", ("2 person", "4 person", "6 person"))), (50, 200)),
    ProductType(
        "dumbbells", "Dumbbells", ("dumbbells",), (SPORTS, "Exercise & Fitness", "Strength Training", "Dumbbells"),
        ("non slip grip", "neoprene coated", "hex shape", "anti roll", "sold in pairs", "easy storage"),
        (("color", ("black", "pink", "blue", "purple")), ("weight", ("5 lb", "10 lb", "15 lb", "20 lb"))), (15, 80)),
    ProductType(
        "hiking backpack", "Hiking Backpack", ("backpack",),
        (SPORTS, "Outdoor Recreation", "Camping & Hiking", "Backpacks & Bags"),
        ("water resistant", "padded shoulder straps", "large capacity", "hydration compatible", "rain cover",
         "multiple compartments", "lightweight"),
        (("color", GEAR_COLORS), ("size", ("30l", "40l", "50l"))), (25, 90)),
    ProductType(
        "resistance bands", "Resistance Bands", ("bands",), (SPORTS, "Exercise & Fitness", "Resistance Bands"),
        ("five resistance levels", "door anchor", "carry bag", "latex free", "ankle straps", "exercise guide"),
        (("color", ("multicolor", "black", "pink")),), (10, 35)),
    # -- pet supplies -----------------------------------------------------------------------------
    ProductType(
        "dog leash", "Dog Leash", ("leash",), (PETS, "Dogs", "Collars, Harnesses & Leashes", "Leashes"),
        ("reflective stitching", "padded handle", "heavy duty", "traffic handle", "swivel clasp", "waterproof"),
        (("color", GEAR_COLORS), ("length", ("4 ft", "5 ft", "6 ft"))), (8, 30)),
    ProductType(
        "dog bed", "Dog Bed", ("bed",), (PETS, "Dogs", "Beds & Furniture", "Beds"),
        ("orthopedic", "memory foam", "removable cover", "machine washable", "waterproof liner",
         "non slip bottom", "raised bolster"),
        (("color", HOME_COLORS), ("size", ("small", "medium", "large", "x-large"))), (20, 90)),
    ProductType(
        "cat scratching post", "Cat Scratching Post", ("scratching",), (PETS, "Cats", "Furniture", "Scratchers"),
        ("sisal rope", "stable base", "hanging toy", "easy assembly", "plush top", "space saving"),
        (("color", ("beige", "grey", "charcoal")), ("height", ("24 inch", "32 inch"))), (15, 50)),
    ProductType(
        "cat litter", "Clumping Cat Litter", ("litter",), (PETS, "Cats", "Litter & Housebreaking", "Litter"),
        ("unscented", "low dust", "odor control", "flushable", "natural clay", "multi cat"),
        (("size", ("20 lb", "28 lb", "40 lb")),), (10, 35)),
    ProductType(
        "dog treats", "Dog Treats", ("treats",), (PETS, "Dogs", "Treats"),
        ("grain free", "made in usa", "natural ingredients", "soft chewy", "high protein", "limited ingredient",
         "training size"),
        (("flavor", ("chicken", "beef", "peanut butter", "salmon", "sweet potato")),
         ("size", ("6 oz", "12 oz", "24 oz"))), (6, 30)),
    # -- office, toys, health ---------------------------------------------------------------------
    ProductType(
        "gel pens", "Gel Pens", ("pens",), (OFFICE, "Office & School Supplies", "Writing Supplies", "Gel Pens"),
        ("quick dry ink", "fine point", "retractable", "smooth writing", "comfort grip"),
        (("color", ("black", "blue", "assorted")), ("pack", ("12 pack", "24 pack", "36 pack"))), (5, 20)),
    ProductType(
        "spiral notebook", "Spiral Notebook", ("notebook",), (OFFICE, "Office & School Supplies", "Paper",
                                                               "Notebooks"),
        (("college ruled", "wide ruled", "dotted grid"), "thick paper", "perforated pages", "hard cover",
         "pocket folder"),
        (("color", ("black", "blue", "red", "assorted")), ("pack", ("1 pack", "3 pack", "5 pack"))), (5, 25)),
    ProductType(
        "desk organizer", "Desk Organizer", ("organizer",), (OFFICE, "Office & School Supplies", "Desk Accessories"),
        ("mesh metal", "multiple compartments", "pencil cup", "sliding drawer", "easy assembly", "space saving"),
        (("color", ("black", "white", "silver", "rose gold")),), (10, 40)),
    ProductType(
        "building blocks", "Building Blocks Set", ("blocks",), (TOYS, "Building Toys", "Building Sets"),
        ("stem educational", "storage box", ("ages 3 and up", "ages 6 and up", "ages 8 and up"), "non toxic",
         "compatible with major brands"),
        (("pieces", ("300 pieces", "500 pieces", "1000 pieces")),), (15, 60)),
    ProductType(
        "jigsaw puzzle", "Jigsaw Puzzle", ("puzzle",), (TOYS, "Puzzles", "Jigsaw Puzzles"),
        ("thick pieces", "poster included", ("landscape art", "animal theme", "city skyline"), "random cut",
         "recycled cardboard"),
        (("pieces", ("500 pieces", "1000 pieces", "1500 pieces")),), (10, 30)),
    ProductType(
        "vitamin d3", "Vitamin D3 Softgels", ("vitamin",), (HEALTH, "Vitamins & Supplements", "Vitamin D"),
        ("non gmo", "gluten free", "third party tested", "high potency", "once daily", "easy to swallow"),
        (("size", ("60 count", "120 count", "240 count")),), (8, 30)),
    ProductType(
        "electric toothbrush", "Electric Toothbrush", ("toothbrush",),
        (HEALTH, "Oral Care", "Toothbrushes", "Electric Toothbrushes"),
        ("rechargeable battery", "two minute timer", "pressure sensor", "travel case", "replacement heads included",
         "multiple modes"),
        (("color", ("black", "white", "pink", "blue")),), (20, 90)),
)
