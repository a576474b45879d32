"""The data behind the embedded sites: a shop's catalogue and its customer's past orders, a forum's boards, posts and
comments. Generated from one seed, so every server (and every test) sees the same sites and the same tasks.

The two sites stand in for WebArena's One Stop Market (a Magento shop) and Postmill (a Reddit-like forum): the kinds
of page WebArena's tasks use (search, listings, item pages, cart, checkout, order history, account; boards sorted by
new or top, posts with comments, forms to post and reply) with text an agent has to read to answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache

SEED = 20231003
CUSTOMER = "Alex Morgan"
CUSTOMER_EMAIL = "alex.morgan@example.com"
FORUM_USER = "MarvelsGrantMan136"  # the forum account the agent is logged in as (a Postmill user name in WebArena)

_CATEGORIES = {
    "Kitchen": (["Mug", "Kettle", "Cutting Board", "Skillet", "Teapot", "Colander", "Spatula", "Salad Bowl",
                 "Chef Knife", "Pepper Mill"], ["Ceramic", "Bamboo", "Cast Iron", "Enamel", "Glass", "Copper"]),
    "Garden": (["Watering Can", "Trowel", "Planter", "Hose Reel", "Pruning Shears", "Bird Feeder", "Rake",
                "Seed Tray", "Garden Gloves", "Wheelbarrow"], ["Galvanized", "Terracotta", "Cedar", "Steel", "Rubber"]),
    "Office": (["Notebook", "Desk Lamp", "Stapler", "Letter Tray", "Pen Set", "Monitor Stand", "Desk Organizer",
                "Bookend", "Whiteboard", "File Cabinet"], ["Leather", "Walnut", "Aluminum", "Recycled", "Matte"]),
    "Sports": (["Yoga Mat", "Water Bottle", "Jump Rope", "Dumbbell", "Tennis Racket", "Running Belt", "Foam Roller",
                "Bike Helmet", "Gym Bag", "Resistance Band"],
               ["Lightweight", "Pro", "Carbon", "Neoprene", "Insulated"]),
    "Electronics": (["Headphones", "Power Bank", "USB Hub", "Webcam", "Bluetooth Speaker", "Keyboard", "Mouse",
                     "Phone Stand", "Charging Cable", "Smart Plug"], ["Wireless", "Compact", "Portable", "Dual",
                                                                     "Rugged"]),
    "Beauty": (["Hand Cream", "Shampoo", "Face Mask", "Lip Balm", "Body Lotion", "Hair Brush", "Nail Kit",
                "Soap Bar", "Sunscreen", "Shower Gel"], ["Lavender", "Argan", "Unscented", "Citrus", "Oat"]),
    "Pets": (["Dog Leash", "Cat Bed", "Pet Bowl", "Chew Toy", "Litter Box", "Bird Cage", "Fish Net", "Pet Brush",
              "Dog Collar", "Scratching Post"], ["Reflective", "Plush", "Sturdy", "Washable", "Chew-proof"]),
    "Toys": (["Puzzle", "Kite", "Building Blocks", "Plush Bear", "Yo-yo", "Toy Car", "Board Game", "Marble Run",
              "Jigsaw", "Spinning Top"], ["Wooden", "Classic", "Giant", "Mini", "Rainbow"]),
}
_COLOURS = ["Red", "Blue", "Green", "Black", "White", "Grey", "Yellow", "Orange", "Purple", "Teal"]
_STATUSES = ["Complete", "Complete", "Complete", "Canceled", "Pending"]
_FORUMS = ["books", "cooking", "gardening", "running", "photography", "boardgames", "diy", "movies", "music",
           "travel", "science", "pets"]
_TOPICS = {
    "books": ["a mystery novel", "a poetry collection", "the library sale", "my reading list", "an audiobook",
              "a book club pick", "a used bookstore", "a translated novel"],
    "cooking": ["sourdough starter", "a weeknight curry", "cast iron care", "homemade pasta", "a lemon tart",
                "knife sharpening", "meal prep", "a spice rack"],
    "gardening": ["tomato blight", "a raised bed", "compost bins", "winter bulbs", "a herb spiral", "aphids",
                  "seed saving", "a rain barrel"],
    "running": ["a first marathon", "shin splints", "trail shoes", "an interval plan", "a rainy long run",
                "race nutrition", "a couch to 5k", "hill repeats"],
    "photography": ["a prime lens", "night skies", "film scanning", "a tripod", "street portraits",
                    "golden hour", "a light meter", "bird photos"],
    "boardgames": ["a co-op game", "a game night", "card sleeves", "a deck builder", "a worker placement game",
                   "solo play", "a trivia game", "miniatures"],
    "diy": ["a bookshelf", "a leaky tap", "drywall patching", "a workbench", "tile grout", "a garden shed",
            "a stuck drawer", "wall anchors"],
    "movies": ["a silent film", "a director's cut", "a film festival", "a sequel", "a documentary",
               "a soundtrack", "an animated film", "a cult classic"],
    "music": ["a vinyl find", "guitar strings", "a live album", "a piano method", "a choir", "a drum machine",
              "a jazz standard", "an old cassette"],
    "travel": ["a night train", "a packing list", "a mountain hut", "a cheap flight", "a city pass",
               "a ferry crossing", "a hostel", "a road trip"],
    "science": ["a comet", "a lab notebook", "tide pools", "a home telescope", "fermentation", "a weather station",
                "fossils", "magnets"],
    "pets": ["a rescue dog", "a shy cat", "a parrot", "an aquarium", "a hamster wheel", "leash training",
             "a vet visit", "a pet sitter"],
}
_TITLE_FORMS = ["Thoughts on {t}?", "My experience with {t}", "Need advice about {t}", "Finally tried {t}",
                "Is {t} worth it?", "A question about {t}", "What I learned from {t}", "Photos of {t}"]
_NAMES = ["quietfox", "lena_m", "birchwood", "trailmix42", "pixelpine", "ottoman_empire", "zed_runner",
          "marigold", "kettlebell", "nightowl88", "harbourlight", "cobalt_cat", "figtree", "moss_and_stone",
          "northwind", "paperplane", "ridgeback", "saltwater", "tinkerer", "velvetsky", "wanderlust_j",
          "yellowfin", "amberjack", "bramble", "copperkettle", "dunewalker", "emberglow", "frostbyte",
          "gravelroad", "hollyhock", "ironwood", "junebug", "kingfisher", "lanternfish", "meadowlark",
          "nettle", "oakhill", "plumtree", "quillpen", "rookery"]
_COMMENT_FORMS = ["Great post, thanks for sharing.", "I had the same problem last year.", "Could you post an update?",
                  "This is really helpful.", "I disagree, but interesting read.", "Where did you get it?",
                  "Saving this for later.", "Same here, would recommend.", "Any photos?", "How long did it take?"]
_STREETS = ["Maple Street", "Harbor Road", "Elm Avenue", "Cedar Lane", "Pine Court", "Lake Drive", "Hill Road",
            "River Walk", "Station Road", "Park Avenue", "Mill Lane", "Orchard Way"]
_CITIES = ["Pittsburgh", "Portland", "Austin", "Denver", "Boston", "Madison", "Raleigh", "Tucson", "Spokane",
           "Albany", "Omaha", "Savannah"]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Product:
    id: int
    sku: str
    name: str
    category: str
    price: float
    rating: int  # percent, as Magento shows it
    reviews: tuple[tuple[str, int, str], ...]  # (author, stars, text)
    description: str

    @property
    def price_text(self) -> str:
        return f"${self.price:,.2f}"


@dataclass(frozen=True)
class Order:
    number: str  # "000000170"
    date: str  # "3/14/23"
    items: tuple[tuple[int, int], ...]  # (product id, quantity)
    status: str
    address: str

    def total(self, products: dict[int, Product]) -> float:
        return round(sum(products[p].price * q for p, q in self.items), 2)


@dataclass(frozen=True)
class Comment:
    author: str
    text: str


@dataclass(frozen=True)
class Post:
    id: int
    forum: str
    title: str
    author: str
    body: str
    score: int
    comments: tuple[Comment, ...]

    @property
    def path(self) -> str:
        return f"/f/{self.forum}/{self.id}/{slug(self.title)}"


@dataclass(frozen=True)
class World:
    products: dict[int, Product]
    categories: tuple[str, ...]
    orders: tuple[Order, ...]
    address: str
    forums: tuple[str, ...]
    posts: dict[int, Post]
    users: tuple[str, ...] = field(default=tuple(_NAMES))

    def by_name(self, name: str) -> Product:
        return next(p for p in self.products.values() if p.name == name)

    def forum_posts(self, forum: str) -> list[Post]:
        return [p for p in self.posts.values() if p.forum == forum]


def address(rng: random.Random) -> tuple[str, str, str]:
    """A street, city and postcode."""
    return f"{rng.randint(2, 998)} {rng.choice(_STREETS)}", rng.choice(_CITIES), f"{rng.randint(10000, 99999)}"


@lru_cache(maxsize=1)
def build(seed: int = SEED) -> World:
    rng = random.Random(seed)
    products: dict[int, Product] = {}
    names: set[str] = set()
    for category, (nouns, adjectives) in _CATEGORIES.items():
        made = 0
        while made < 40:
            name = f"{rng.choice(adjectives)} {rng.choice(_COLOURS)} {rng.choice(nouns)}"
            if name in names:
                continue
            names.add(name)
            pid = len(products) + 1
            reviews = tuple((rng.choice(_NAMES), rng.randint(1, 5), rng.choice(_COMMENT_FORMS))
                            for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 12])))
            rating = round(20 * sum(r[1] for r in reviews) / len(reviews)) if reviews else 0
            products[pid] = Product(
                id=pid, sku=f"B0{rng.randint(10**7, 10**8 - 1)}", name=name, category=category,
                price=round(rng.uniform(3, 180), 2), rating=rating, reviews=reviews,
                description=f"A {name.lower()} for everyday use. Ships in {rng.randint(1, 9)} business days.")
            made += 1
    street, city, post = address(rng)
    home = f"{CUSTOMER}, {street}, {city} {post}"
    orders = []
    for _ in range(30):
        items = tuple((pid, rng.randint(1, 3)) for pid in rng.sample(sorted(products), rng.randint(1, 4)))
        month, day, year = rng.randint(1, 12), rng.randint(1, 28), rng.choice([22, 23])
        orders.append((f"{year}{month:02d}{day:02d}", items))
    orders.sort()
    order_objs = tuple(
        Order(number=f"{160 + i:09d}", date=f"{int(d[2:4])}/{int(d[4:])}/{d[:2]}", items=items,
              status=rng.choice(_STATUSES), address=home)
        for i, (d, items) in enumerate(orders))
    posts: dict[int, Post] = {}
    titles: set[str] = set()
    for forum in _FORUMS:
        made = 0
        while made < 15:
            title = rng.choice(_TITLE_FORMS).format(t=rng.choice(_TOPICS[forum]))
            if title in titles:
                continue
            titles.add(title)
            pid = 100 + len(posts)
            comments = tuple(Comment(rng.choice(_NAMES), rng.choice(_COMMENT_FORMS))
                             for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 6, 8])))
            body = f"Posting in f/{forum} about {title.lower().rstrip('?')}. Any thoughts welcome."
            scores = {p.score for p in posts.values() if p.forum == forum}
            score = rng.randint(-3, 150)
            while score in scores:  # one top post per board
                score += 1
            posts[pid] = Post(pid, forum, title, rng.choice(_NAMES), body, score, comments)
            made += 1
    return World(products, tuple(_CATEGORIES), order_objs, home, tuple(_FORUMS), posts)
