"""The local Todoist stand-in: generated to-do accounts (projects, tasks, the user's date and city).

AgentGym's todo tools call the Todoist REST API on a real account that its server fills from
``projects.json`` (five projects of three to four tasks, each with a description of "- Place: ..."
lines, a due date, a duration in minutes and a priority from 1, normal, to 4, urgent). Here an
account is generated in the same shape from project themes below, with a seeded RNG per task, so
each task comes with its own account and the same one on every machine. Accounts are immutable
templates: a session works on its own copy (:meth:`Account.copy`).
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from dataclasses import dataclass

CITIES = ("New York", "London", "Paris", "Berlin", "Tokyo", "Toronto", "Sydney", "Madrid", "Seoul", "Chicago")
COLORS = ("charcoal", "berry_red", "blue", "green", "orange", "grape", "teal", "lavender")
DURATIONS = (15, 20, 30, 45, 60, 75, 90, 120, 150, 180)

#: project name -> tasks (content, place, a detail line, a tip)
THEMES: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "Homework and Assignments": (
        ("Solve algebra equations", "Library", "TextBook: Algebra Essentials, chapter 4",
         "Start with the simpler equations and check each result."),
        ("Conduct a chemistry experiment", "Student Building", "Equipment Needed: pH paper and a thermometer",
         "Contact the teacher in advance to book the lab."),
        ("Read and summarize a history chapter", "Library", "Chapter Name: The Industrial Revolution",
         "Take a short break every 30 minutes."),
        ("Write an English essay", "Home", "Topic: A book that changed my mind",
         "Draft an outline before writing."),
        ("Prepare for the physics quiz", "Student Building", "Topics: Newton's laws and momentum",
         "Redo the exercises from the last two lectures."),
        ("Finish the geography worksheet", "Home", "Pages: 40-46 of the workbook",
         "Use the atlas for the map questions."),
    ),
    "Extracurricular Activities": (
        ("Attend soccer practice", "Community Sports Field", "Coach: Mr. Ramirez",
         "Bring soccer shoes and a water bottle."),
        ("Rehearse with the school band", "Student Building", "Instrument: violin",
         "Practice the assigned songs at home first."),
        ("Attend debate club meeting", "Student Building", "Advisor: Ms. Roberts",
         "Prepare arguments on the assigned topic."),
        ("Volunteer at the food bank", "Downtown Food Bank", "Shift: sorting donations",
         "Wear closed shoes."),
        ("Join the chess club tournament", "Library", "Format: five rounds of rapid games",
         "Review two openings the night before."),
        ("Sign up for the art workshop", "Community Center", "Medium: watercolour",
         "Bring your own brushes if you have them."),
    ),
    "Science Fair Project": (
        ("Design and conduct a biology experiment", "School laboratory", "Subject: plant growth under coloured light",
         "Keep a daily log of measurements."),
        ("Prepare presentation for science fair", "Home", "Format: slide presentation",
         "Practice presenting to family members."),
        ("Write a research paper on the experiment", "Library", "Length: about six pages",
         "Cite every source you used."),
        ("Build the display board", "Home", "Materials: foam board and printed charts",
         "Leave space for the results section."),
        ("Order lab supplies", "Online", "Items: seed trays, LED lamps, soil",
         "Order early: delivery can take a week."),
    ),
    "Household Chores": (
        ("Clean the kitchen", "Home", "Focus: stove, counters and fridge", "Start from the top shelves down."),
        ("Do the laundry", "Home", "Loads: whites and colours", "Separate whites from colours."),
        ("Tidy up the living room", "Home", "Focus: shelves and sofa", "Put things back where they belong first."),
        ("Water the plants", "Balcony", "Plants: basil, fern and lemon tree", "Water early in the morning."),
        ("Take out the recycling", "Building courtyard", "Bins: paper and glass", "Flatten the cardboard boxes."),
        ("Fix the leaking faucet", "Bathroom", "Tools: wrench and washers", "Turn off the water supply first."),
    ),
    "Picnic Preparation": (
        ("Purchase picnic supplies", "Supermarket", "List: sandwiches, fruit, juice, napkins",
         "Buy drinks last so they stay cold."),
        ("Select picnic location and plan activities", "Central Park", "Activities: frisbee and a quiz",
         "Check the weather forecast."),
        ("Pack the picnic basket", "Home", "Items: blanket, plates, cups", "Pack heavy items at the bottom."),
        ("Invite friends to the picnic", "Online", "Guests: about eight people", "Ask about food allergies."),
    ),
    "Fitness Plan": (
        ("Go for a morning run", "Riverside Trail", "Distance: 5 km", "Warm up for five minutes first."),
        ("Attend yoga class", "City Gym", "Level: beginner", "Bring your own mat."),
        ("Strength training session", "City Gym", "Focus: legs and core", "Rest 90 seconds between sets."),
        ("Plan weekly meals", "Home", "Goal: more protein, less sugar", "Cook in batches on Sunday."),
        ("Book a swimming lesson", "Aquatic Center", "Coach: Ms. Chen", "Bring goggles and a cap."),
    ),
    "Work Sprint": (
        ("Review pull requests", "Office", "Repository: billing service", "Check the tests before the code."),
        ("Write the quarterly report", "Office", "Sections: goals, results, risks", "Start from last quarter's."),
        ("Prepare the client demo", "Meeting Room B", "Client: Northwind Traders", "Rehearse the demo once."),
        ("Update the project roadmap", "Office", "Horizon: next two quarters", "Share it with the team lead."),
        ("Fix the login bug", "Office", "Ticket: AUTH-142", "Reproduce it with a failing test first."),
        ("Plan the team offsite", "Online", "Participants: eight engineers", "Collect date preferences first."),
    ),
    "Home Renovation": (
        ("Paint the bedroom walls", "Home", "Colour: light grey", "Cover the floor with plastic sheets."),
        ("Get quotes from contractors", "Online", "Scope: new kitchen cabinets", "Ask at least three companies."),
        ("Buy new light fixtures", "Hardware Store", "Rooms: hallway and kitchen", "Check the bulb sockets."),
        ("Replace the bathroom tiles", "Bathroom", "Area: about six square metres", "Buy ten percent extra tiles."),
        ("Assemble the new bookshelf", "Home", "Model: five shelves, oak", "Follow the manual step by step."),
    ),
    "Travel Planning": (
        ("Book flight tickets", "Online", "Route: to Lisbon and back", "Compare prices on several days."),
        ("Reserve the hotel", "Online", "Stay: four nights near the old town", "Pick free cancellation."),
        ("Renew the passport", "City Hall", "Documents: photo and old passport", "Book an appointment first."),
        ("Buy travel insurance", "Online", "Cover: health and cancellation", "Read the exclusions."),
        ("Make a packing list", "Home", "Trip length: five days", "Check the weather at the destination."),
    ),
    "Book Club": (
        ("Read the club's novel", "Home", "Book: The Silent Orchard", "Note three questions for the meeting."),
        ("Host the monthly meeting", "Community Center", "Guests: twelve members", "Prepare tea and snacks."),
        ("Pick next month's book", "Library", "Shortlist: three novels", "Ask members to vote online."),
        ("Write the meeting summary", "Home", "Audience: absent members", "Keep it under one page."),
    ),
}


@dataclass
class Project:
    id: str
    name: str
    order: int
    color: str
    is_favorite: bool = False

    def view(self) -> dict:
        """What get_projects shows of it (Todoist's fields that upstream keeps)."""
        return {"id": self.id, "order": self.order, "color": self.color, "name": self.name,
                "is_favorite": self.is_favorite}


@dataclass
class Todo:
    id: str
    project_id: str
    order: int
    content: str
    description: str
    due_date: str  # YYYY-MM-DD
    duration: int  # minutes
    priority: int  # 1 (normal) .. 4 (urgent)
    is_completed: bool = False

    @property
    def place(self) -> str:
        return self.description.split("\n", 1)[0].removeprefix("- Place: ")

    def view(self) -> dict:
        """What get_tasks shows of it (upstream drops the description and the duration)."""
        return {"id": self.id, "order": self.order, "content": self.content, "is_completed": self.is_completed,
                "priority": self.priority, "due_date": self.due_date}

    @property
    def duration_text(self) -> str:
        return f"{self.duration}(minute)"


@dataclass
class Account:
    """One user's to-do account and context (the date and city the date/location tools report)."""

    projects: list[Project]
    tasks: list[Todo]
    current_date: str
    current_location: str

    def copy(self) -> Account:
        """A session's own copy: edits never reach the shared template."""
        return Account(copy.deepcopy(self.projects), copy.deepcopy(self.tasks), self.current_date,
                       self.current_location)

    @property
    def today(self) -> dt.date:
        return dt.date.fromisoformat(self.current_date)

    def project(self, project_id: str) -> Project | None:
        return next((p for p in self.projects if p.id == project_id), None)

    def project_named(self, name: str) -> Project:
        return next(p for p in self.projects if p.name == name)

    def task(self, task_id: str) -> Todo | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def task_named(self, content: str) -> Todo:
        return next(t for t in self.tasks if t.content == content)

    def tasks_of(self, project_id: str) -> list[Todo]:
        return sorted((t for t in self.tasks if t.project_id == project_id), key=lambda t: t.order)

    def snapshot(self) -> dict:
        """The whole state, keyed by id (what grading compares)."""
        return {"projects": {p.id: p.view() for p in self.projects},
                "tasks": {t.id: {**t.view(), "project_id": t.project_id, "duration": t.duration,
                                 "description": t.description} for t in self.tasks}}


def generate_account(rng: random.Random) -> Account:
    """An account of 4-5 projects with 3-5 tasks each, dates around a "today" in 2015-2024."""
    today = dt.date(rng.randint(2015, 2024), rng.randint(1, 12), rng.randint(1, 28))
    names = rng.sample(sorted(THEMES), rng.randint(4, 5))
    projects, tasks = [], []
    pid_base = rng.randint(2_200_000_000, 2_299_000_000)
    tid_base = rng.randint(7_100_000_000, 7_199_000_000)
    for i, name in enumerate(names):
        project = Project(str(pid_base + 7 * i), name, i + 1, rng.choice(COLORS))
        projects.append(project)
        templates = rng.sample(THEMES[name], min(len(THEMES[name]), rng.randint(3, 5)))
        for j, (content, place, detail, tip) in enumerate(templates):
            due = today + dt.timedelta(days=rng.randint(-6, 24))
            done = due < today and rng.random() < 0.25  # some of the past ones were done in time
            tasks.append(Todo(str(tid_base + 100 * i + 3 * j), project.id, j + 1, content,
                              f"- Place: {place}\n- {detail}\n- Tips: {tip}", due.isoformat(),
                              rng.choice(DURATIONS), rng.randint(1, 4), done))
    if rng.random() < 0.3:
        rng.choice(projects).is_favorite = True
    return Account(projects, tasks, today.isoformat(), rng.choice(CITIES))
