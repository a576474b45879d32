"""The six generated databases: their schemas and seeded, realistic rows.

Each database is a :class:`~agentenv_sqlgym.schema.DatabaseSpec` and a function that fills it from a
``random.Random`` seeded by the database's name, so every machine builds byte-for-byte the same
rows. Sizes are modest (tens to about a thousand rows a table): big enough that answers are not
visible at a glance and need joins and aggregates, small enough that any sane query is instant.
Labels (names, titles, flight numbers) are unique within their table, so a question can name a row.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import date, timedelta

from agentenv_sqlgym.schema import Bridge, Column, DatabaseSpec, Link, Table

Rows = dict[str, list[tuple]]

FIRST = ("Ana", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Isabel", "Jamal", "Keiko", "Liam",
         "Maria", "Noah", "Olivia", "Pedro", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wei", "Xavier",
         "Yara", "Zoe", "Amir", "Bianca", "Carlos", "Dina", "Emil", "Fatima", "Gustav", "Hana", "Ivan", "Julia",
         "Kofi", "Lena", "Mateo", "Nadia", "Oscar", "Priya", "Rafael", "Sofia", "Tomas", "Uma", "Viktor", "Wanda",
         "Yusuf", "Zara", "Aisha", "Bruno", "Clara", "Diego", "Eva", "Felix", "Greta", "Hugo", "Ines", "Jonas")
LAST = ("Silva", "Smith", "Garcia", "Novak", "Tanaka", "Okafor", "Rossi", "Dubois", "Kim", "Nguyen", "Haddad",
        "Kowalski", "Jensen", "Costa", "Ivanova", "Patel", "Schmidt", "Moreau", "Lopez", "Sato", "Mensah", "Berg",
        "Fischer", "Romero", "Chen", "Larsen", "Ali", "Petrov", "Baker", "Reyes", "Yilmaz", "Andersen", "Murphy",
        "Santos", "Weber", "Hughes", "Kaur", "Nakamura", "Fernandes", "Olsen", "Bauer", "Herrera", "Wong", "Kelly",
        "Popescu", "Mendes", "Svensson", "Abbott", "Ortiz", "Lindqvist")
CITIES = (("Lisbon", "Portugal"), ("Porto", "Portugal"), ("Madrid", "Spain"), ("Barcelona", "Spain"),
          ("Paris", "France"), ("Lyon", "France"), ("Berlin", "Germany"), ("Munich", "Germany"), ("Rome", "Italy"),
          ("Milan", "Italy"), ("Amsterdam", "Netherlands"), ("Dublin", "Ireland"), ("London", "United Kingdom"),
          ("Manchester", "United Kingdom"), ("Toronto", "Canada"), ("Chicago", "United States"),
          ("Boston", "United States"), ("Austin", "United States"), ("Tokyo", "Japan"), ("Osaka", "Japan"),
          ("Seoul", "South Korea"), ("Sydney", "Australia"), ("Cape Town", "South Africa"), ("Mexico City", "Mexico"))
COUNTRIES = tuple(sorted({c for _, c in CITIES}))
START = date(2021, 1, 1)


def _people(rng: random.Random, n: int, prefix: str = "") -> list[str]:
    """``n`` distinct full names, in a seeded order."""
    names = [f"{prefix}{f} {s}" for f in FIRST for s in LAST]
    return rng.sample(names, n)


def _day(rng: random.Random, start: date = START, days: int = 4 * 365) -> date:
    return start + timedelta(days=rng.randrange(days))


def _money(x: float) -> float:
    return round(x, 2)


#: measures whose total means something (the others are averaged, compared and sorted, never summed)
ADDITIVE = frozenset({"stock", "shipping_fee", "quantity", "salary", "distance_km", "duration_min", "fare", "cost",
                      "days", "pages", "copies", "late_fee", "budget_musd", "box_office_musd", "consultation_fee",
                      "max_students"})


def _c(name: str, sql_type: str, role: str = "attr", phrase: str = "", references: str | None = None,
       null_phrase: str = "") -> Column:
    return Column(name, sql_type, role, phrase, references, null_phrase, additive=name in ADDITIVE)


# -- retail_shop ------------------------------------------------------------------------------------
RETAIL = DatabaseSpec(
    name="retail_shop",
    tables=(
        Table("customers", "customer", "customers", (
            _c("customer_id", "INTEGER", "key"), _c("name", "TEXT", "label"),
            _c("city", "TEXT", "category"), _c("country", "TEXT", "category"),
            _c("signup_date", "TEXT", "date", "signup date"), _c("loyalty_tier", "TEXT", "category", "loyalty tier"))),
        Table("products", "product", "products", (
            _c("product_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("category", "TEXT", "category"),
            _c("price", "REAL", "number"), _c("stock", "INTEGER", "number", "stock"))),
        Table("orders", "order", "orders", (
            _c("order_id", "INTEGER", "key"), _c("customer_id", "INTEGER", "fk", references="customers(customer_id)"),
            _c("order_date", "TEXT", "date", "order date"), _c("status", "TEXT", "category"),
            _c("shipping_fee", "REAL", "number", "shipping fee"))),
        Table("order_items", "order item", "order items", (
            _c("order_item_id", "INTEGER", "key"), _c("order_id", "INTEGER", "fk", references="orders(order_id)"),
            _c("product_id", "INTEGER", "fk", references="products(product_id)"),
            _c("quantity", "INTEGER", "number"), _c("unit_price", "REAL", "number", "unit price"))),
    ),
    links=(Link("orders", "customer_id", "customers", "orders", "customer"),
           Link("order_items", "product_id", "products", "order items", "product")),
    bridges=(Bridge("customers", "products", "ordered",
                    "customers AS A JOIN orders AS O ON O.customer_id = A.customer_id "
                    "JOIN order_items AS I ON I.order_id = O.order_id "
                    "JOIN products AS B ON B.product_id = I.product_id"),),
)

PRODUCT_LINES = {
    "Electronics": (("Headphones", "Keyboard", "Mouse", "Monitor", "Speaker", "Webcam", "Charger", "Tablet"), 15, 600),
    "Home": (("Lamp", "Kettle", "Blender", "Toaster", "Vase", "Rug", "Clock", "Mirror"), 12, 250),
    "Sports": (("Yoga Mat", "Dumbbell", "Tennis Racket", "Football", "Bike Helmet", "Water Bottle"), 8, 180),
    "Stationery": (("Notebook", "Pen Set", "Planner", "Backpack", "Desk Organizer"), 3, 60),
    "Toys": (("Puzzle", "Building Blocks", "Kite", "Board Game", "Plush Bear"), 6, 90),
}
BRANDS = ("Nova", "Apex", "Zen", "Orbit", "Luma", "Terra", "Vivo", "Echo", "Pulse", "Astra")


def _retail(rng: random.Random) -> Rows:
    customers = []
    for i, name in enumerate(_people(rng, 150), 1):
        city, country = rng.choice(CITIES)
        tier = rng.choices(("Bronze", "Silver", "Gold", "Platinum"), (5, 3, 2, 1))[0]
        customers.append((i, name, city, country, _day(rng).isoformat(), tier))
    catalogue = [(cat, f"{b} {item}", lo, hi) for cat, (items, lo, hi) in PRODUCT_LINES.items()
                 for item in items for b in BRANDS]
    products = []
    for i, (cat, name, lo, hi) in enumerate(sorted(rng.sample(catalogue, 80), key=lambda p: p[1]), 1):
        products.append((i, name, cat, _money(rng.uniform(lo, hi)), rng.randrange(0, 300)))
    orders, items = [], []
    for i in range(1, 501):
        customer = rng.randrange(1, 151)
        status = rng.choices(("delivered", "shipped", "processing", "cancelled"), (10, 3, 2, 2))[0]
        fee = rng.choice((0.0, 0.0, 4.99, 7.5, 12.0))
        orders.append((i, customer, _day(rng).isoformat(), status, fee))
        for product in rng.sample(range(1, 81), rng.choice((1, 1, 2, 2, 3, 4))):
            price = products[product - 1][3]
            unit = _money(price * rng.choice((1.0, 1.0, 1.0, 0.9, 0.8)))
            items.append((len(items) + 1, i, product, rng.choice((1, 1, 1, 2, 2, 3, 5)), unit))
    return {"customers": customers, "products": products, "orders": orders, "order_items": items}


# -- school -----------------------------------------------------------------------------------------
SCHOOL = DatabaseSpec(
    name="school",
    tables=(
        Table("departments", "department", "departments", (
            _c("department_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("building", "TEXT", "category"))),
        Table("teachers", "teacher", "teachers", (
            _c("teacher_id", "INTEGER", "key"), _c("name", "TEXT", "label"),
            _c("department_id", "INTEGER", "fk", references="departments(department_id)"),
            _c("hire_year", "INTEGER", "number", "hire year"), _c("salary", "REAL", "number"))),
        Table("students", "student", "students", (
            _c("student_id", "INTEGER", "key"), _c("name", "TEXT", "label"),
            _c("grade_level", "INTEGER", "category", "grade level"), _c("gender", "TEXT", "category"),
            _c("home_town", "TEXT", "category", "home town"), _c("birth_date", "TEXT", "date", "birth date"))),
        Table("courses", "course", "courses", (
            _c("course_id", "INTEGER", "key"), _c("title", "TEXT", "label"),
            _c("department_id", "INTEGER", "fk", references="departments(department_id)"),
            _c("teacher_id", "INTEGER", "fk", references="teachers(teacher_id)"),
            _c("credits", "INTEGER", "category"), _c("max_students", "INTEGER", "number", "maximum class size"))),
        Table("enrollments", "enrollment", "enrollments", (
            _c("enrollment_id", "INTEGER", "key"), _c("student_id", "INTEGER", "fk", references="students(student_id)"),
            _c("course_id", "INTEGER", "fk", references="courses(course_id)"),
            _c("semester", "TEXT", "category"), _c("final_grade", "REAL", "number", "final grade",
                                                    null_phrase="have no final grade yet"))),
    ),
    links=(Link("teachers", "department_id", "departments", "teachers", "department"),
           Link("courses", "department_id", "departments", "courses", "department"),
           Link("courses", "teacher_id", "teachers", "courses", "teacher"),
           Link("enrollments", "course_id", "courses", "enrollments", "course")),
    bridges=(Bridge("students", "courses", "enrolled in",
                    "students AS A JOIN enrollments AS E ON E.student_id = A.student_id "
                    "JOIN courses AS B ON B.course_id = E.course_id"),
             Bridge("students", "teachers", "took a course with",
                    "students AS A JOIN enrollments AS E ON E.student_id = A.student_id "
                    "JOIN courses AS C ON C.course_id = E.course_id "
                    "JOIN teachers AS B ON B.teacher_id = C.teacher_id")),
)

SUBJECTS = {
    "Mathematics": ("Algebra I", "Algebra II", "Geometry", "Calculus", "Statistics"),
    "Physics": ("Mechanics", "Electricity and Magnetism", "Optics", "Modern Physics", "Astronomy"),
    "Chemistry": ("General Chemistry", "Organic Chemistry", "Biochemistry", "Lab Techniques",
                  "Environmental Chemistry"),
    "Biology": ("Cell Biology", "Genetics", "Ecology", "Human Anatomy", "Marine Biology"),
    "History": ("World History", "Ancient Civilizations", "Modern Europe", "American History", "History of Science"),
    "Literature": ("Poetry Workshop", "The Novel", "Drama and Theatre", "Creative Writing", "World Literature"),
    "Computer Science": ("Programming Basics", "Data Structures", "Web Development", "Robotics", "Databases"),
    "Art": ("Drawing", "Painting", "Sculpture", "Photography", "Art History"),
}
BUILDINGS = ("North Hall", "South Hall", "East Wing", "West Wing", "Main Building")
TOWNS = ("Riverside", "Oakdale", "Hillcrest", "Lakeview", "Maple Grove", "Stonebridge")
SEMESTERS = ("2023-Fall", "2024-Spring", "2024-Fall")


def _school(rng: random.Random) -> Rows:
    departments = [(i, name, rng.choice(BUILDINGS)) for i, name in enumerate(SUBJECTS, 1)]
    teachers = []
    for i, name in enumerate(_people(rng, 40), 1):
        dept = (i - 1) % len(SUBJECTS) + 1
        hired = rng.randrange(1995, 2024)
        salary = round(42000 + (2024 - hired) * 1100 + rng.uniform(0, 15000), -2)
        teachers.append((i, name, dept, hired, float(salary)))
    students = []
    for i, name in enumerate(_people(rng, 220), 1):
        grade = rng.choice((9, 10, 11, 12))
        born = date(2024 - grade - 6, 1, 1) + timedelta(days=rng.randrange(365))
        students.append((i, name, grade, rng.choice(("F", "M")), rng.choice(TOWNS), born.isoformat()))
    courses = []
    for dept_id, titles in enumerate(SUBJECTS.values(), 1):
        staff = [t[0] for t in teachers if t[2] == dept_id]
        for title in titles:
            courses.append((len(courses) + 1, title, dept_id, rng.choice(staff), rng.choice((1, 2, 3, 3, 4, 5)),
                            rng.choice((15, 20, 25, 30, 35))))
    enrollments = []
    for s in students:
        for course in sorted(rng.sample(range(1, len(courses) + 1), rng.randrange(3, 7))):
            semester = rng.choice(SEMESTERS)
            grade = None if semester == "2024-Fall" and rng.random() < 0.5 else round(rng.uniform(45, 100), 1)
            enrollments.append((len(enrollments) + 1, s[0], course, semester, grade))
    return {"departments": departments, "teachers": teachers, "students": students, "courses": courses,
            "enrollments": enrollments}


# -- flights ----------------------------------------------------------------------------------------
FLIGHTS = DatabaseSpec(
    name="flights",
    tables=(
        Table("airports", "airport", "airports", (
            _c("airport_code", "TEXT", "key"), _c("name", "TEXT", "label"), _c("city", "TEXT", "attr"),
            _c("country", "TEXT", "category"), _c("latitude", "REAL", "attr"), _c("longitude", "REAL", "attr"))),
        Table("airlines", "airline", "airlines", (
            _c("airline_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("iata_code", "TEXT", "attr"),
            _c("country", "TEXT", "category"), _c("founded_year", "INTEGER", "number", "founding year"))),
        Table("flights", "flight", "flights", (
            _c("flight_id", "INTEGER", "key"), _c("flight_number", "TEXT", "label", "flight number"),
            _c("airline_id", "INTEGER", "fk", references="airlines(airline_id)"),
            _c("origin_code", "TEXT", "fk", references="airports(airport_code)"),
            _c("destination_code", "TEXT", "fk", references="airports(airport_code)"),
            _c("aircraft", "TEXT", "category", "aircraft type"),
            _c("distance_km", "INTEGER", "number", "distance in km"),
            _c("duration_min", "INTEGER", "number", "duration in minutes"))),
        Table("passengers", "passenger", "passengers", (
            _c("passenger_id", "INTEGER", "key"), _c("name", "TEXT", "label"),
            _c("nationality", "TEXT", "category"), _c("birth_year", "INTEGER", "number", "birth year"),
            _c("frequent_flyer_level", "TEXT", "category", "frequent flyer level",
               null_phrase="are not in the frequent flyer program"))),
        Table("bookings", "booking", "bookings", (
            _c("booking_id", "INTEGER", "key"),
            _c("passenger_id", "INTEGER", "fk", references="passengers(passenger_id)"),
            _c("flight_id", "INTEGER", "fk", references="flights(flight_id)"),
            _c("booking_date", "TEXT", "date", "booking date"), _c("seat_class", "TEXT", "category", "seat class"),
            _c("fare", "REAL", "number"))),
    ),
    links=(Link("flights", "airline_id", "airlines", "flights", "airline"),
           Link("flights", "origin_code", "airports", "departing flights", "origin airport"),
           Link("flights", "destination_code", "airports", "arriving flights", "destination airport"),
           Link("bookings", "flight_id", "flights", "bookings", "flight"),
           Link("bookings", "passenger_id", "passengers", "bookings", "passenger")),
    bridges=(Bridge("passengers", "flights", "booked",
                    "passengers AS A JOIN bookings AS K ON K.passenger_id = A.passenger_id "
                    "JOIN flights AS B ON B.flight_id = K.flight_id"),
             Bridge("passengers", "airlines", "flew with",
                    "passengers AS A JOIN bookings AS K ON K.passenger_id = A.passenger_id "
                    "JOIN flights AS F ON F.flight_id = K.flight_id "
                    "JOIN airlines AS B ON B.airline_id = F.airline_id")),
)

AIRPORTS = (
    ("LIS", "Humberto Delgado Airport", "Lisbon", "Portugal", 38.77, -9.13),
    ("OPO", "Francisco Sa Carneiro Airport", "Porto", "Portugal", 41.24, -8.68),
    ("MAD", "Adolfo Suarez Madrid-Barajas Airport", "Madrid", "Spain", 40.47, -3.56),
    ("BCN", "Josep Tarradellas Barcelona-El Prat Airport", "Barcelona", "Spain", 41.30, 2.08),
    ("CDG", "Charles de Gaulle Airport", "Paris", "France", 49.01, 2.55),
    ("LYS", "Lyon-Saint Exupery Airport", "Lyon", "France", 45.73, 5.08),
    ("BER", "Berlin Brandenburg Airport", "Berlin", "Germany", 52.37, 13.50),
    ("MUC", "Munich Airport", "Munich", "Germany", 48.35, 11.79),
    ("FCO", "Leonardo da Vinci-Fiumicino Airport", "Rome", "Italy", 41.80, 12.25),
    ("MXP", "Milan Malpensa Airport", "Milan", "Italy", 45.63, 8.72),
    ("AMS", "Amsterdam Airport Schiphol", "Amsterdam", "Netherlands", 52.31, 4.76),
    ("DUB", "Dublin Airport", "Dublin", "Ireland", 53.42, -6.27),
    ("LHR", "Heathrow Airport", "London", "United Kingdom", 51.47, -0.45),
    ("MAN", "Manchester Airport", "Manchester", "United Kingdom", 53.35, -2.27),
    ("YYZ", "Toronto Pearson International Airport", "Toronto", "Canada", 43.68, -79.63),
    ("ORD", "O'Hare International Airport", "Chicago", "United States", 41.98, -87.90),
    ("BOS", "Logan International Airport", "Boston", "United States", 42.36, -71.01),
    ("JFK", "John F. Kennedy International Airport", "New York", "United States", 40.64, -73.78),
    ("HND", "Haneda Airport", "Tokyo", "Japan", 35.55, 139.78),
    ("KIX", "Kansai International Airport", "Osaka", "Japan", 34.43, 135.23),
    ("ICN", "Incheon International Airport", "Seoul", "South Korea", 37.46, 126.44),
    ("SYD", "Sydney Kingsford Smith Airport", "Sydney", "Australia", -33.94, 151.18),
    ("CPT", "Cape Town International Airport", "Cape Town", "South Africa", -33.97, 18.60),
    ("MEX", "Mexico City International Airport", "Mexico City", "Mexico", 19.44, -99.07),
)
AIRLINES = (("Atlantic Air", "AT", "Portugal", 1961), ("Polar Wings", "PW", "Ireland", 1985),
            ("Sunline", "SL", "Spain", 1999), ("Blue Heron Airways", "BH", "United Kingdom", 1947),
            ("Meridian Air", "MR", "Italy", 1972), ("Coral Airlines", "CR", "Australia", 1990),
            ("Northstar", "NS", "Canada", 2004), ("Falcon Express", "FX", "Germany", 2011),
            ("Sakura Sky", "SK", "Japan", 1956), ("Andes Air", "AN", "Mexico", 1979))
AIRCRAFT = ("A320", "A321", "A350", "B737", "B787", "E190")
LEVELS = ("Silver", "Gold", "Platinum")


def _km(a: tuple, b: tuple) -> int:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[4], a[5], b[4], b[5]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return round(2 * 6371 * math.asin(math.sqrt(h)))


def _flights(rng: random.Random) -> Rows:
    airports = [tuple(a) for a in AIRPORTS]
    airlines = [(i, name, code, country, year) for i, (name, code, country, year) in enumerate(AIRLINES, 1)]
    flights, numbers = [], set()
    while len(flights) < 220:
        airline = rng.choice(airlines)
        origin, dest = rng.sample(airports, 2)
        number = f"{airline[2]}{rng.randrange(100, 1000)}"
        if number in numbers:
            continue
        numbers.add(number)
        km = _km(origin, dest)
        aircraft = rng.choice(AIRCRAFT[2:5:2] if km > 4000 else AIRCRAFT)
        minutes = int(round((km / 820 * 60 + 35 + rng.randrange(0, 25)) / 5) * 5)
        flights.append((len(flights) + 1, number, airline[0], origin[0], dest[0], aircraft, km, minutes))
    passengers = []
    for i, name in enumerate(_people(rng, 260), 1):
        level = rng.choice(LEVELS) if rng.random() < 0.4 else None
        passengers.append((i, name, rng.choice(COUNTRIES), rng.randrange(1945, 2007), level))
    bookings = []
    classes = (("Economy", 1.0), ("Premium Economy", 1.6), ("Business", 3.2), ("First", 5.5))
    for i in range(1, 901):
        flight = rng.choice(flights)
        seat, mult = rng.choices(classes, (12, 4, 3, 1))[0]
        fare = _money((60 + flight[6] * 0.09) * mult * rng.uniform(0.85, 1.25))
        bookings.append((i, rng.randrange(1, 261), flight[0], _day(rng).isoformat(), seat, fare))
    return {"airports": airports, "airlines": airlines, "flights": flights, "passengers": passengers,
            "bookings": bookings}


# -- hospital ---------------------------------------------------------------------------------------
HOSPITAL = DatabaseSpec(
    name="hospital",
    tables=(
        Table("departments", "department", "departments", (
            _c("department_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("floor", "INTEGER", "category"))),
        Table("doctors", "doctor", "doctors", (
            _c("doctor_id", "INTEGER", "key"), _c("name", "TEXT", "label"),
            _c("department_id", "INTEGER", "fk", references="departments(department_id)"),
            _c("title", "TEXT", "category"), _c("years_experience", "INTEGER", "number", "years of experience"),
            _c("consultation_fee", "REAL", "number", "consultation fee"))),
        Table("patients", "patient", "patients", (
            _c("patient_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("gender", "TEXT", "category"),
            _c("birth_year", "INTEGER", "number", "birth year"), _c("city", "TEXT", "category"),
            _c("blood_type", "TEXT", "category", "blood type"))),
        Table("appointments", "appointment", "appointments", (
            _c("appointment_id", "INTEGER", "key"),
            _c("patient_id", "INTEGER", "fk", references="patients(patient_id)"),
            _c("doctor_id", "INTEGER", "fk", references="doctors(doctor_id)"),
            _c("appointment_date", "TEXT", "date", "appointment date"), _c("diagnosis", "TEXT", "category"),
            _c("status", "TEXT", "category"), _c("cost", "REAL", "number"))),
        Table("prescriptions", "prescription", "prescriptions", (
            _c("prescription_id", "INTEGER", "key"),
            _c("appointment_id", "INTEGER", "fk", references="appointments(appointment_id)"),
            _c("medication", "TEXT", "category"), _c("dosage_mg", "INTEGER", "number", "dosage in mg"),
            _c("days", "INTEGER", "number", "number of days"))),
    ),
    links=(Link("doctors", "department_id", "departments", "doctors", "department"),
           Link("appointments", "doctor_id", "doctors", "appointments", "doctor"),
           Link("appointments", "patient_id", "patients", "appointments", "patient")),
    bridges=(Bridge("patients", "doctors", "had an appointment with",
                    "patients AS A JOIN appointments AS P ON P.patient_id = A.patient_id "
                    "JOIN doctors AS B ON B.doctor_id = P.doctor_id"),
             Bridge("doctors", "patients", "treated",
                    "doctors AS A JOIN appointments AS P ON P.doctor_id = A.doctor_id "
                    "JOIN patients AS B ON B.patient_id = P.patient_id")),
)

WARDS = {
    "Cardiology": ("hypertension", "arrhythmia", "angina"), "Neurology": ("migraine", "epilepsy", "neuropathy"),
    "Orthopedics": ("fracture", "arthritis", "back pain"), "Pediatrics": ("otitis", "bronchiolitis", "chickenpox"),
    "Oncology": ("lymphoma", "melanoma", "leukemia"), "Dermatology": ("eczema", "psoriasis", "acne"),
    "Gastroenterology": ("gastritis", "reflux", "colitis"), "Psychiatry": ("depression", "anxiety", "insomnia"),
    "Pulmonology": ("asthma", "pneumonia", "bronchitis"), "Endocrinology": ("diabetes", "hypothyroidism", "obesity"),
}
MEDICATIONS = (("Amoxicillin", 500), ("Ibuprofen", 400), ("Metformin", 850), ("Lisinopril", 10),
               ("Atorvastatin", 20), ("Omeprazole", 20), ("Sertraline", 50), ("Levothyroxine", 100),
               ("Prednisone", 5), ("Salbutamol", 2))
BLOOD = (("O+", 37), ("A+", 34), ("B+", 9), ("AB+", 4), ("O-", 7), ("A-", 6), ("B-", 2), ("AB-", 1))


def _hospital(rng: random.Random) -> Rows:
    departments = [(i, name, rng.randrange(1, 6)) for i, name in enumerate(WARDS, 1)]
    doctors = []
    for i, name in enumerate(_people(rng, 45, "Dr. "), 1):
        years = rng.randrange(1, 36)
        title = "Resident" if years < 5 else rng.choice(("Attending", "Attending", "Consultant"))
        doctors.append((i, name, (i - 1) % len(WARDS) + 1, title, years, _money(80 + years * 4 + rng.uniform(0, 60))))
    cities = [c for c, _ in CITIES[:8]]
    patients = []
    for i, name in enumerate(_people(rng, 300), 1):
        blood = rng.choices([b for b, _ in BLOOD], [w for _, w in BLOOD])[0]
        patients.append((i, name, rng.choice(("F", "M")), rng.randrange(1935, 2022), rng.choice(cities), blood))
    appointments, prescriptions = [], []
    diagnoses = list(WARDS.values())
    for i in range(1, 951):
        doctor = rng.choice(doctors)
        status = rng.choices(("completed", "cancelled", "no-show"), (16, 3, 1))[0]
        cost = _money(doctor[5] + rng.choice((0, 0, 35, 120, 260)))
        appointments.append((i, rng.randrange(1, 301), doctor[0], _day(rng).isoformat(),
                             rng.choice(diagnoses[doctor[2] - 1]), status, cost))
        if status == "completed":
            for med, dose in rng.sample(MEDICATIONS, rng.choice((0, 1, 1, 2))):
                prescriptions.append((len(prescriptions) + 1, i, med, dose * rng.choice((1, 1, 2)),
                                      rng.choice((5, 7, 10, 14, 30, 90))))
    return {"departments": departments, "doctors": doctors, "patients": patients, "appointments": appointments,
            "prescriptions": prescriptions}


# -- library ----------------------------------------------------------------------------------------
LIBRARY = DatabaseSpec(
    name="library",
    tables=(
        Table("authors", "author", "authors", (
            _c("author_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("country", "TEXT", "category"),
            _c("birth_year", "INTEGER", "number", "birth year"))),
        Table("books", "book", "books", (
            _c("book_id", "INTEGER", "key"), _c("title", "TEXT", "label"),
            _c("author_id", "INTEGER", "fk", references="authors(author_id)"), _c("genre", "TEXT", "category"),
            _c("publish_year", "INTEGER", "number", "publication year"), _c("pages", "INTEGER", "number", "page count"),
            _c("copies", "INTEGER", "number", "number of copies"))),
        Table("members", "member", "members", (
            _c("member_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("city", "TEXT", "category"),
            _c("join_date", "TEXT", "date", "join date"),
            _c("membership_type", "TEXT", "category", "membership type"))),
        Table("loans", "loan", "loans", (
            _c("loan_id", "INTEGER", "key"), _c("book_id", "INTEGER", "fk", references="books(book_id)"),
            _c("member_id", "INTEGER", "fk", references="members(member_id)"),
            _c("loan_date", "TEXT", "date", "loan date"),
            _c("return_date", "TEXT", "attr", "return date", null_phrase="have not been returned"),
            _c("late_fee", "REAL", "number", "late fee"))),
    ),
    links=(Link("books", "author_id", "authors", "books", "author"),
           Link("loans", "book_id", "books", "loans", "book"),
           Link("loans", "member_id", "members", "loans", "member")),
    bridges=(Bridge("members", "books", "borrowed",
                    "members AS A JOIN loans AS L ON L.member_id = A.member_id "
                    "JOIN books AS B ON B.book_id = L.book_id"),
             Bridge("members", "authors", "borrowed a book by",
                    "members AS A JOIN loans AS L ON L.member_id = A.member_id "
                    "JOIN books AS K ON K.book_id = L.book_id JOIN authors AS B ON B.author_id = K.author_id")),
)

TITLE_A = ("Silent", "Hidden", "Last", "Golden", "Broken", "Distant", "Crimson", "Winter", "Secret", "Wild",
           "Lost", "Quiet", "Burning", "Paper", "Iron", "Glass")
TITLE_B = ("River", "Garden", "Kingdom", "Letters", "Harbor", "Mountain", "Orchard", "Empire", "Shadows", "Voyage",
           "Island", "Machine", "Lantern", "Forest", "Promise", "Mirror")
GENRES = ("Fiction", "Mystery", "Science Fiction", "Fantasy", "Biography", "History", "Poetry", "Romance")


def _titles(rng: random.Random, n: int, a: tuple[str, ...] = TITLE_A, b: tuple[str, ...] = TITLE_B) -> list[str]:
    pool = [f"The {x} {y}" for x in a for y in b] + [f"{y} of {x}" for x in ("Time", "Stone", "Light", "Salt")
                                                     for y in b]
    return rng.sample(pool, n)


def _library(rng: random.Random) -> Rows:
    authors = [(i, name, rng.choice(COUNTRIES), rng.randrange(1920, 1995))
               for i, name in enumerate(_people(rng, 60), 1)]
    books = []
    for i, title in enumerate(_titles(rng, 220), 1):
        author = rng.choice(authors)
        year = rng.randrange(max(author[3] + 22, 1950), 2024)
        books.append((i, title, author[0], rng.choice(GENRES), year, rng.randrange(90, 900), rng.randrange(1, 8)))
    members = [(i, name, rng.choice([c for c, _ in CITIES[:6]]), _day(rng, date(2018, 1, 1), 6 * 365).isoformat(),
                rng.choices(("standard", "student", "premium"), (6, 3, 2))[0])
               for i, name in enumerate(_people(rng, 160), 1)]
    loans = []
    for i in range(1, 751):
        out = _day(rng, date(2023, 1, 1), 2 * 365)
        returned = None if rng.random() < 0.15 else out + timedelta(days=rng.randrange(3, 45))
        late = _money(max(0, (returned - out).days - 21) * 0.25) if returned else 0.0
        loans.append((i, rng.randrange(1, 221), rng.randrange(1, 161), out.isoformat(),
                      returned.isoformat() if returned else None, late))
    return {"authors": authors, "books": books, "members": members, "loans": loans}


# -- movies -----------------------------------------------------------------------------------------
MOVIES = DatabaseSpec(
    name="movies",
    tables=(
        Table("directors", "director", "directors", (
            _c("director_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("country", "TEXT", "category"),
            _c("birth_year", "INTEGER", "number", "birth year"))),
        Table("movies", "movie", "movies", (
            _c("movie_id", "INTEGER", "key"), _c("title", "TEXT", "label"),
            _c("director_id", "INTEGER", "fk", references="directors(director_id)"),
            _c("release_year", "INTEGER", "number", "release year"), _c("genre", "TEXT", "category"),
            _c("runtime_min", "INTEGER", "number", "runtime in minutes"),
            _c("budget_musd", "REAL", "number", "budget in million USD"),
            _c("box_office_musd", "REAL", "number", "box office in million USD"), _c("rating", "REAL", "number"))),
        Table("actors", "actor", "actors", (
            _c("actor_id", "INTEGER", "key"), _c("name", "TEXT", "label"), _c("country", "TEXT", "category"),
            _c("birth_year", "INTEGER", "number", "birth year"))),
        Table("casting", "cast role", "cast roles", (
            _c("casting_id", "INTEGER", "key"), _c("movie_id", "INTEGER", "fk", references="movies(movie_id)"),
            _c("actor_id", "INTEGER", "fk", references="actors(actor_id)"),
            _c("role_type", "TEXT", "category", "role type"), _c("character_name", "TEXT", "attr", "character name"))),
    ),
    links=(Link("movies", "director_id", "directors", "movies", "director"),
           Link("casting", "actor_id", "actors", "roles", "actor"),
           Link("casting", "movie_id", "movies", "cast roles", "movie")),
    bridges=(Bridge("actors", "movies", "appeared in",
                    "actors AS A JOIN casting AS C ON C.actor_id = A.actor_id "
                    "JOIN movies AS B ON B.movie_id = C.movie_id"),
             Bridge("actors", "directors", "worked with",
                    "actors AS A JOIN casting AS C ON C.actor_id = A.actor_id "
                    "JOIN movies AS M ON M.movie_id = C.movie_id "
                    "JOIN directors AS B ON B.director_id = M.director_id")),
)

MOVIE_A = ("Midnight", "Electric", "Savage", "Eternal", "Velvet", "Neon", "Frozen", "Scarlet", "Hollow", "Bright",
           "Falling", "Northern", "Stolen", "Endless")
MOVIE_B = ("Horizon", "Protocol", "Summer", "Signal", "Heist", "Dreams", "Frontier", "Echoes", "Station", "Tide",
           "Crown", "Highway", "Witness", "Circus")
MOVIE_GENRES = (("Drama", 90, 160), ("Comedy", 80, 120), ("Action", 95, 150), ("Thriller", 90, 135),
                ("Animation", 75, 110), ("Documentary", 70, 120), ("Horror", 80, 115))
CHARACTERS = ("Detective", "Captain", "Doctor", "Mother", "Stranger", "Pilot", "Teacher", "Thief", "Singer", "Agent")


def _movies(rng: random.Random) -> Rows:
    directors = [(i, name, rng.choice(COUNTRIES), rng.randrange(1940, 1990))
                 for i, name in enumerate(_people(rng, 40), 1)]
    movies = []
    for i, title in enumerate(_titles(rng, 220, MOVIE_A, MOVIE_B), 1):
        genre, lo, hi = rng.choice(MOVIE_GENRES)
        budget = round(rng.uniform(1, 40) if genre == "Documentary" else rng.uniform(5, 220), 1)
        box = round(budget * rng.lognormvariate(0.6, 0.8), 1)
        rating = round(min(9.6, max(2.5, rng.gauss(6.6, 1.1))), 1)
        movies.append((i, title, rng.randrange(1, 41), rng.randrange(1975, 2025), genre, rng.randrange(lo, hi),
                       budget, box, rating))
    actors = [(i, name, rng.choice(COUNTRIES), rng.randrange(1945, 2005))
              for i, name in enumerate(_people(rng, 200), 1)]
    casting = []
    for m in movies:
        for k, actor in enumerate(rng.sample(range(1, 201), rng.randrange(2, 6))):
            role = "lead" if k == 0 else rng.choice(("supporting", "supporting", "cameo"))
            casting.append((len(casting) + 1, m[0], actor, role, f"{rng.choice(CHARACTERS)} {rng.choice(LAST)}"))
    return {"directors": directors, "movies": movies, "actors": actors, "casting": casting}


#: every generated database, in a fixed order, with the function that fills it
DATABASES: tuple[tuple[DatabaseSpec, Callable[[random.Random], Rows]], ...] = (
    (RETAIL, _retail), (SCHOOL, _school), (FLIGHTS, _flights), (HOSPITAL, _hospital), (LIBRARY, _library),
    (MOVIES, _movies),
)


def rows_of(spec: DatabaseSpec, fill: Callable[[random.Random], Rows]) -> Rows:
    """The database's rows, from an RNG seeded by its name (the same on every machine)."""
    rows = fill(random.Random(f"agentenv-sqlgym/{spec.name}"))
    for table in spec.tables:
        width = len(table.columns)
        assert all(len(r) == width for r in rows[table.name]), table.name
    return rows
