"""Realistic tables to fill the workbooks: inventories, grade books, task boards, payrolls, sales.

Each generator draws from a seeded RNG, so the same task id gives the same table on every machine.
The first column always holds a unique key (a product, a person, a task) that tasks name rows by.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from agentenv_sheet.formula import Value

FOODS = {
    "Meat": ["beef", "pork", "chicken", "lamb", "duck", "turkey", "veal", "bacon"],
    "Seafood": ["fish", "shrimp", "salmon", "tuna", "crab", "lobster", "squid", "oyster"],
    "Fruits": ["apple", "banana", "orange", "grape", "mango", "pear", "peach", "cherry", "kiwi", "lemon"],
    "Vegetables": ["carrot", "potato", "tomato", "onion", "lettuce", "cabbage", "spinach", "broccoli", "pepper"],
    "Dairy": ["milk", "cheese", "butter", "yogurt", "cream"],
    "Bakery": ["bread", "bagel", "croissant", "muffin", "baguette"],
}
PRICE_RANGE = {"Meat": (4.0, 16.0), "Seafood": (3.0, 18.0), "Fruits": (0.3, 4.0), "Vegetables": (0.3, 3.5),
               "Dairy": (1.0, 8.0), "Bakery": (0.8, 5.0)}
FIRST_NAMES = ["Alice", "Bella", "Chris", "Daniel", "Emma", "Frank", "Grace", "Henry", "Irene", "Jack", "Karen", "Leo",
               "Mia", "Nelson", "Olivia", "Peter", "Quincy", "Rachel", "Sam", "Tom", "Uma", "Victor", "Wendy",
               "Xavier", "Yara", "Zoe", "Aaron", "Brooke", "Caleb", "Diana", "Ethan", "Fiona", "George", "Hannah",
               "Ivan", "Julia", "Kevin", "Laura", "Mason", "Nora"]
LAST_NAMES = ["Smith", "Johnson", "Harris", "Thompson", "Anderson", "Wilson", "Jackson", "Martin", "Lee", "Walker",
              "Young", "King", "Wright", "Lopez", "Hill", "Scott", "Green", "Adams", "Baker", "Nelson"]
TASK_NAMES = ["Database Backup", "Client Meeting", "Newsletter Preparation", "Security Audit", "Website Redesign",
              "Budget Review", "Server Upgrade", "Market Research", "Code Review", "User Survey", "Logo Design",
              "Tax Filing", "Product Launch", "Team Training", "Bug Triage", "Data Migration", "Press Release",
              "Invoice Processing", "Inventory Count", "Vendor Negotiation", "API Documentation", "Load Testing",
              "Social Media Campaign", "Quarterly Report", "Onboarding Plan", "Office Move", "Payroll Run",
              "License Renewal", "Customer Feedback Analysis", "Mobile App Release"]
TASK_CATEGORIES = ["Development", "Design", "Marketing", "Finance", "Maintenance", "Operations"]
STATUSES = ["Not Started", "In Progress", "Completed"]
DEPARTMENTS = {"Sales": ["Sales Rep", "Account Manager"], "IT": ["Developer", "Sysadmin"],
               "HR": ["Recruiter", "HR Specialist"], "Finance": ["Accountant", "Analyst"],
               "Operations": ["Coordinator", "Supervisor"]}
STORES = ["Store A", "Store B", "Store C", "Store D"]
GADGETS = ["Laptop", "Monitor", "Keyboard", "Mouse", "Headphones", "Webcam", "Printer", "Router", "Tablet",
           "Smartwatch", "Speaker", "Charger", "Hard Drive", "Microphone", "Projector", "Scanner"]
GADGET_PRICE = (8.0, 900.0)
SUBJECTS = ["Math", "English", "Physics", "Chemistry", "Biology"]


@dataclass(frozen=True)
class Table:
    """A generated table: its header, its rows, and what each column is."""

    domain: str
    title: str  # what the table holds, for the task's wording ("the product inventory")
    header: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    categories: tuple[int, ...]  # 0-based columns of a few repeated labels (Category, Status, ...)
    numbers: tuple[int, ...]  # 0-based numeric columns
    decimals: dict[int, int]  # numeric column -> decimals its values are written with
    summable: tuple[int, ...]  # numeric columns whose sum means something (quantities, hours, money)

    def column(self, index: int) -> list[Value]:
        return [row[index] for row in self.rows]


def _money(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def inventory(rng: random.Random, n: int) -> Table:
    cats = rng.sample(sorted(FOODS), 4)
    pool = sorted((item, cat) for cat in cats for item in FOODS[cat])
    picked = rng.sample(pool, min(n, len(pool)))
    rows = []
    for item, cat in picked:
        rows.append((item, cat, _money(rng, *PRICE_RANGE[cat]), float(rng.randint(5, 300)),
                     rng.choice([0.0, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2]), rng.choice(STORES),
                     round(rng.uniform(3.5, 5.0), 1)))
    return Table("inventory", "the product inventory information",
                 ("Product", "Category", "Price", "Quantity", "Discount", "Location", "Product Rating"),
                 tuple(rows), (1, 5), (2, 3, 4, 6), {2: 2, 3: 0, 4: 2, 6: 1}, (3,))


def grades(rng: random.Random, n: int) -> Table:
    names = rng.sample(FIRST_NAMES, n)
    rows = [(name, float(rng.randint(1, 3)), *(float(rng.randint(40, 100)) for _ in SUBJECTS)) for name in names]
    return Table("grades", "the students' exam scores", ("Name", "Class", *SUBJECTS), tuple(rows), (1,),
                 (2, 3, 4, 5, 6), {i: 0 for i in range(1, 7)}, (2, 3, 4, 5, 6))


def task_board(rng: random.Random, n: int) -> Table:
    names = rng.sample(TASK_NAMES, n)
    people = [f"{f} {ln}" for f, ln in zip(rng.sample(FIRST_NAMES, 5), rng.sample(LAST_NAMES, 5), strict=True)]
    rows = [(name, rng.choice(people), rng.choice(STATUSES), rng.choice(TASK_CATEGORIES),
             float(rng.randint(1, 40))) for name in names]
    return Table("tasks", "the task assignment table", ("Task Name", "Assignee", "Status", "Category",
                                                        "Estimated Hours"),
                 tuple(rows), (2, 3), (4,), {4: 0}, (4,))


def payroll(rng: random.Random, n: int) -> Table:
    people = sorted({f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(n * 3)})
    people = rng.sample(people, n)
    rows = []
    for person in people:
        dept = rng.choice(sorted(DEPARTMENTS))
        rows.append((person, dept, rng.choice(DEPARTMENTS[dept]), float(rng.randint(120, 200)),
                     float(rng.choice(range(30, 121))) / 2, float(rng.choice(range(0, 1001, 50)))))
    return Table("payroll", "the monthly payroll", ("Employee", "Department", "Position", "Hours Worked",
                                                    "Hourly Rate", "Bonus"),
                 tuple(rows), (1, 2), (3, 4, 5), {3: 0, 4: 2, 5: 0}, (3, 5))


def store_sales(rng: random.Random, n: int) -> Table:
    items = rng.sample(GADGETS, n)
    rows = []
    for item in items:
        price = _money(rng, *GADGET_PRICE)
        rows.append((item, rng.choice(STORES), float(rng.randint(3, 120)), price,
                     round(price * rng.uniform(0.5, 0.85), 2)))
    return Table("sales", "the monthly sales of the electronics shop", ("Product", "Store", "Units Sold",
                                                                         "Unit Price", "Unit Cost"),
                 tuple(rows), (1,), (2, 3, 4), {2: 0, 3: 2, 4: 2}, (2,))


GENERATORS: dict[str, Callable[[random.Random, int], Table]] = {
    "inventory": inventory, "grades": grades, "tasks": task_board, "payroll": payroll, "sales": store_sales,
}
