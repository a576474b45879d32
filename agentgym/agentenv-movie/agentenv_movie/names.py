"""The vocabulary the film database is generated from: names, places, title words, genres, story parts.

Genres, countries and languages carry TMDB's real identifiers (genre ids, ISO 3166-1 / 639-1 codes);
people, films, companies and stories are invented by combining these lists.
"""

from __future__ import annotations

FIRST_NAMES = (
    "Adrian", "Alice", "Amara", "Anders", "Anika", "Ben", "Bianca", "Caleb", "Camille", "Carlos", "Chiara", "Clara",
    "Daniel", "Dara", "Diego", "Elena", "Elias", "Emma", "Eva", "Felix", "Fiona", "Gabriel", "Grace", "Hana", "Hugo",
    "Ines", "Isaac", "Ivy", "Jack", "Jonas", "Julia", "Kai", "Karin", "Keira", "Leo", "Lena", "Liam", "Lucia",
    "Luis", "Maya", "Marcus", "Mateo", "Mila", "Nadia", "Nathan", "Nina", "Noah", "Nora", "Oliver", "Olivia",
    "Oscar", "Paula", "Pedro", "Priya", "Quinn", "Rafael", "Rosa", "Ruby", "Samuel", "Sara", "Sebastian", "Sofia",
    "Stella", "Theo", "Tessa", "Tomas", "Uma", "Victor", "Vera", "Walter", "Wren", "Xavier", "Yara", "Yusuf", "Zoe",
    "Arthur", "Beatrice", "Cyrus", "Delia", "Edgar", "Freya", "Gideon", "Helena", "Ilya", "Josephine", "Kenji",
    "Lorenzo", "Margot", "Niall", "Ottilie", "Percy", "Rhea", "Silas", "Talia", "Ulrich", "Vivian", "Willa",
)
LAST_NAMES = (
    "Abbott", "Alvarez", "Andersen", "Archer", "Baker", "Barlow", "Bennett", "Blake", "Brennan", "Calloway",
    "Carver", "Castillo", "Chen", "Clarke", "Collins", "Conti", "Dalton", "Delgado", "Donovan", "Duarte", "Ellison",
    "Emerson", "Falk", "Fischer", "Fletcher", "Foster", "Garner", "Gallo", "Greco", "Hale", "Hartley", "Hayes",
    "Holm", "Ibarra", "Ingram", "Jensen", "Jovanovic", "Kane", "Keller", "Kimura", "Kowalski", "Lambert", "Larsen",
    "Lindqvist", "Lowell", "Madsen", "Marlowe", "Mercer", "Moreau", "Navarro", "Nakamura", "Novak", "Okafor",
    "Olsen", "Ortega", "Park", "Pearce", "Petrov", "Quill", "Ramos", "Reyes", "Richter", "Rossi", "Salazar",
    "Sato", "Schmidt", "Serrano", "Sinclair", "Sorensen", "Stone", "Sullivan", "Tanaka", "Thorne", "Torres",
    "Underwood", "Valdez", "Vance", "Varga", "Voss", "Wagner", "Walsh", "Weber", "Whitaker", "Winslow", "Wolfe",
    "Yamada", "Young", "Zeller", "Zimmer", "Brandt", "Cortez", "Hoffman", "Lindgren", "Marsh", "Pryce", "Rourke",
    "Sterling", "Tate", "Ventura", "Wilde", "Ashford", "Beaumont", "Crane", "Dunmore", "Everly", "Fairchild",
)
FEMININE = {"Alice", "Amara", "Anika", "Bianca", "Camille", "Chiara", "Clara", "Dara", "Elena", "Emma", "Eva",
            "Fiona", "Grace", "Hana", "Ines", "Ivy", "Julia", "Karin", "Keira", "Lena", "Lucia", "Maya", "Mila",
            "Nadia", "Nina", "Nora", "Olivia", "Paula", "Priya", "Rosa", "Ruby", "Sara", "Sofia", "Stella", "Tessa",
            "Uma", "Vera", "Wren", "Yara", "Zoe", "Beatrice", "Delia", "Freya", "Helena", "Josephine", "Margot",
            "Ottilie", "Rhea", "Talia", "Vivian", "Willa", "Quinn"}

#: birthplaces in TMDB's "City, State, Country" style, with the nationality a biography names
BIRTHPLACES = (
    ("Los Angeles, California, USA", "American"), ("New York City, New York, USA", "American"),
    ("Chicago, Illinois, USA", "American"), ("Austin, Texas, USA", "American"), ("Boston, Massachusetts, USA",
                                                                              "American"),
    ("Seattle, Washington, USA", "American"), ("Atlanta, Georgia, USA", "American"),
    ("Denver, Colorado, USA", "American"), ("Portland, Oregon, USA", "American"),
    ("Knoxville, Tennessee, USA", "American"), ("Concord, California, USA", "American"),
    ("London, England, UK", "British"), ("Manchester, England, UK", "British"), ("Leeds, England, UK", "British"),
    ("Edinburgh, Scotland, UK", "British"), ("Cardiff, Wales, UK", "British"), ("Dublin, Ireland", "Irish"),
    ("Toronto, Ontario, Canada", "Canadian"), ("Vancouver, British Columbia, Canada", "Canadian"),
    ("Montréal, Québec, Canada", "Canadian"), ("Sydney, New South Wales, Australia", "Australian"),
    ("Melbourne, Victoria, Australia", "Australian"), ("Auckland, New Zealand", "New Zealand"),
    ("Paris, France", "French"), ("Lyon, France", "French"), ("Berlin, Germany", "German"),
    ("Munich, Bavaria, Germany", "German"), ("Hamburg, Germany", "German"), ("Madrid, Spain", "Spanish"),
    ("Barcelona, Spain", "Spanish"), ("Rome, Lazio, Italy", "Italian"), ("Milan, Lombardy, Italy", "Italian"),
    ("Stockholm, Sweden", "Swedish"), ("Copenhagen, Denmark", "Danish"), ("Oslo, Norway", "Norwegian"),
    ("Amsterdam, Netherlands", "Dutch"), ("Warsaw, Poland", "Polish"), ("Prague, Czech Republic", "Czech"),
    ("Mexico City, Mexico", "Mexican"), ("Buenos Aires, Argentina", "Argentine"),
    ("São Paulo, Brazil", "Brazilian"), ("Tokyo, Japan", "Japanese"), ("Osaka, Japan", "Japanese"),
    ("Seoul, South Korea", "South Korean"), ("Mumbai, Maharashtra, India", "Indian"),
    ("Lagos, Nigeria", "Nigerian"), ("Cape Town, South Africa", "South African"),
)

#: TMDB's movie genres (id, name)
GENRES = (
    (28, "Action"), (12, "Adventure"), (16, "Animation"), (35, "Comedy"), (80, "Crime"), (99, "Documentary"),
    (18, "Drama"), (10751, "Family"), (14, "Fantasy"), (36, "History"), (27, "Horror"), (10402, "Music"),
    (9648, "Mystery"), (10749, "Romance"), (878, "Science Fiction"), (53, "Thriller"), (10752, "War"),
    (37, "Western"),
)

#: production countries (ISO 3166-1, English name) and their weight
COUNTRIES = (
    ("US", "United States of America", 50), ("GB", "United Kingdom", 12), ("FR", "France", 7), ("DE", "Germany", 6),
    ("CA", "Canada", 5), ("JP", "Japan", 4), ("ES", "Spain", 3), ("IT", "Italy", 3), ("KR", "South Korea", 3),
    ("AU", "Australia", 3), ("NZ", "New Zealand", 2), ("MX", "Mexico", 2), ("IN", "India", 2), ("SE", "Sweden", 2),
    ("DK", "Denmark", 1), ("IE", "Ireland", 1), ("NL", "Netherlands", 1), ("BR", "Brazil", 1),
)

COMPANY_FIRST = ("Northlight", "Silver Oak", "Blue Harbor", "Red Lantern", "Ironwood", "Golden Mile", "Paper Moon",
                 "Stormfront", "Wildflower", "Black Swan", "High Tide", "Lighthouse", "Crescent", "Evergreen",
                 "Granite Peak", "Tin Star", "Open Road", "Nightjar", "Copper Kettle", "Far Horizon", "Seventh Wave",
                 "Lantern Hill", "Quiet Storm", "Twin Rivers", "Amber Sky", "Falcon Ridge", "Morning Star",
                 "Velvet Rope", "Glass House", "Long Shadow")
COMPANY_LAST = ("Pictures", "Films", "Studios", "Entertainment", "Productions", "Media")

TITLE_ADJECTIVES = ("Silent", "Crimson", "Broken", "Hidden", "Last", "Endless", "Golden", "Frozen", "Burning",
                    "Distant", "Lonely", "Savage", "Hollow", "Electric", "Wild", "Secret", "Forgotten", "Midnight",
                    "Shattered", "Velvet", "Iron", "Paper", "Bitter", "Restless", "Quiet", "Fallen", "Northern",
                    "Scarlet", "Glass", "Wandering", "Sleeping", "Final", "Little", "Dark", "Bright", "Lost")
TITLE_NOUNS = ("River", "Kingdom", "Harbor", "Garden", "Empire", "Signal", "Horizon", "Orchard", "Lighthouse",
               "Frontier", "Labyrinth", "Carnival", "Circus", "Voyage", "Witness", "Promise", "Shadow", "Summer",
               "Winter", "Station", "Mountain", "Island", "Crown", "Mirror", "Machine", "Season", "Storm", "Bridge",
               "Valley", "Letter", "Highway", "Ocean", "Forest", "Engine", "Compass", "Desert", "Canyon", "Tide",
               "Frequency", "Requiem", "Ballad", "Alibi", "Heist", "Reckoning", "Parade", "Outpost")
TITLE_PLURALS = ("Wolves", "Strangers", "Echoes", "Ghosts", "Kings", "Angels", "Thieves", "Stars", "Rivers",
                 "Dreams", "Shadows", "Giants", "Lions", "Saints", "Sparrows", "Tigers", "Lovers", "Heroes")

KEYWORDS = ("based on novel or book", "revenge", "friendship", "time travel", "heist", "small town", "dystopia",
            "artificial intelligence", "family relationships", "coming of age", "murder", "kidnapping", "space",
            "alien", "world war ii", "road trip", "high school", "love triangle", "survival", "journalism",
            "corruption", "serial killer", "prison", "haunted house", "robot", "magic", "dragon", "island",
            "new york city", "london, england", "paris, france", "tokyo, japan", "car chase", "undercover",
            "betrayal", "biography", "sports", "boxing", "music band", "wedding", "divorce", "single mother",
            "detective", "conspiracy", "hacker", "virtual reality", "post-apocalyptic future", "zombie",
            "vampire", "superhero", "martial arts", "escape", "treasure hunt", "pirate", "cowboy", "desert",
            "mountain climbing", "ocean", "submarine", "politics", "election", "courtroom", "lawyer", "doctor",
            "hospital", "cancer", "amnesia", "dream", "nightmare", "ghost", "twins", "chess", "painting", "museum",
            "theater", "dance", "cooking", "restaurant", "farm", "horse", "dog", "cat", "christmas", "halloween",
            "cult", "secret society", "spy", "cold war", "nuclear war", "pandemic", "climate change", "volcano",
            "earthquake", "shipwreck", "mafia", "gang", "smuggling", "bank robbery", "woman director")

JOBS_BY_DEPARTMENT = {
    "Directing": ("Director",),
    "Production": ("Producer", "Executive Producer"),
    "Writing": ("Screenplay", "Writer", "Novel"),
    "Sound": ("Original Music Composer",),
    "Camera": ("Director of Photography",),
    "Editing": ("Editor",),
}

CHARACTER_TITLES = ("Detective", "Captain", "Dr.", "Agent", "Professor", "Sergeant", "Lieutenant", "Officer",
                    "Mayor", "Judge", "Coach", "Inspector")

# Story parts of an overview in English, German and Dutch (the translations tools return)
HEROES = (
    ("a retired detective", "ein pensionierter Detektiv", "een gepensioneerde rechercheur"),
    ("a young violinist", "eine junge Geigerin", "een jonge violiste"),
    ("a young widower", "ein junger Witwer", "een jonge weduwnaar"),
    ("a disgraced pilot", "ein in Ungnade gefallener Pilot", "een in ongenade gevallen piloot"),
    ("a stubborn farmer", "eine sture Bäuerin", "een koppige boerin"),
    ("a team of thieves", "eine Diebesbande", "een bende dieven"),
    ("a lonely robot", "ein einsamer Roboter", "een eenzame robot"),
    ("a newly elected mayor", "eine frisch gewählte Bürgermeisterin", "een pas gekozen burgemeester"),
    ("an exiled prince", "ein verbannter Prinz", "een verbannen prins"),
    ("a struggling journalist", "eine erfolglose Journalistin", "een worstelende journaliste"),
)
GOALS = (
    ("uncover the truth about a missing sister", "die Wahrheit über eine verschwundene Schwester aufdecken",
     "de waarheid over een vermiste zus ontdekken"),
    ("win back a lost fortune", "ein verlorenes Vermögen zurückgewinnen", "een verloren fortuin terugwinnen"),
    ("protect a secret that could change everything", "ein Geheimnis schützen, das alles verändern könnte",
     "een geheim beschermen dat alles kan veranderen"),
    ("survive a winter cut off from the world", "einen Winter abgeschnitten von der Welt überleben",
     "een winter overleven, afgesneden van de wereld"),
    ("find a way home", "einen Weg nach Hause finden", "een weg naar huis vinden"),
    ("stop a conspiracy at the highest level", "eine Verschwörung auf höchster Ebene aufhalten",
     "een samenzwering op het hoogste niveau stoppen"),
    ("pull off one last impossible job", "einen letzten unmöglichen Coup landen",
     "een laatste onmogelijke klus klaren"),
    ("come to terms with the past", "sich mit der Vergangenheit aussöhnen", "in het reine komen met het verleden"),
)
SETTINGS = (
    ("In a city that never sleeps", "In einer Stadt, die niemals schläft,", "In een stad die nooit slaapt"),
    ("On a remote island", "Auf einer abgelegenen Insel", "Op een afgelegen eiland"),
    ("In the summer of 1969", "Im Sommer 1969", "In de zomer van 1969"),
    ("In a near future", "In naher Zukunft", "In de nabije toekomst"),
    ("On the eve of war", "Am Vorabend des Krieges", "Aan de vooravond van de oorlog"),
    ("In a small mountain village", "In einem kleinen Bergdorf", "In een klein bergdorp"),
    ("Aboard a failing space station", "An Bord einer maroden Raumstation", "Aan boord van een haperend ruimtestation"),
    ("Across a divided country", "Quer durch ein gespaltenes Land", "Dwars door een verdeeld land"),
)
