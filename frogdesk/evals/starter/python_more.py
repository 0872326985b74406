"""The starter suite's other Python tasks: more bug fixes and two small features."""

from __future__ import annotations

from frogdesk.evals.starter.build import py_task

ROMAN = py_task(
    "py-roman",
    "bugfix",
    "The tests in test_roman.py fail: 4 comes out as IIII. Fix roman.py so that they pass.",
    (
        "roman.py",
        '''NUMERALS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(number):
    """The Roman numeral of a number from 1 to 3999."""
    out = ""
    for value, letters in NUMERALS:
        while number >= value:
            out += letters
            number -= value
    return out
''',
    ),
    (
        "test_roman.py",
        """import unittest

from roman import to_roman


class RomanTest(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(to_roman(3), "III")
        self.assertEqual(to_roman(2026), "MMXXVI")

    def test_subtractive(self):
        self.assertEqual(to_roman(4), "IV")
        self.assertEqual(to_roman(9), "IX")
        self.assertEqual(to_roman(1994), "MCMXCIV")
""",
    ),
    '''NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number):
    """The Roman numeral of a number from 1 to 3999."""
    out = ""
    for value, letters in NUMERALS:
        while number >= value:
            out += letters
            number -= value
    return out
''',
)

WORDS = py_task(
    "py-word-count",
    "bugfix",
    "The tests in test_words.py fail. Fix count_words in words.py so that they pass.",
    (
        "words.py",
        '''def count_words(text):
    """How often each word occurs, ignoring case and the punctuation around words."""
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts
''',
    ),
    (
        "test_words.py",
        """import unittest

from words import count_words


class CountWordsTest(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(count_words("a b a"), {"a": 2, "b": 1})

    def test_case_and_punctuation(self):
        self.assertEqual(count_words("Go, go GO! stop."), {"go": 3, "stop": 1})
""",
    ),
    '''import string


def count_words(text):
    """How often each word occurs, ignoring case and the punctuation around words."""
    counts = {}
    for raw in text.split():
        word = raw.strip(string.punctuation).lower()
        if word:
            counts[word] = counts.get(word, 0) + 1
    return counts
''',
)

SLUG = py_task(
    "py-slugify",
    "bugfix",
    "The tests in test_slug.py fail. Fix slugify in slug.py so that they pass.",
    (
        "slug.py",
        '''import re


def slugify(title):
    """A URL slug: lower case, runs of anything but letters and digits as one '-', no '-' at the ends."""
    return re.sub(r"[^a-z0-9]", "-", title.lower())
''',
    ),
    (
        "test_slug.py",
        """import unittest

from slug import slugify


class SlugTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_runs_and_ends(self):
        self.assertEqual(slugify("  Frogs & Toads: a Guide! "), "frogs-toads-a-guide")
""",
    ),
    '''import re


def slugify(title):
    """A URL slug: lower case, runs of anything but letters and digits as one '-', no '-' at the ends."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
''',
)

DURATION = py_task(
    "py-parse-duration",
    "feature",
    "Implement parse_duration in duration.py as its docstring says; test_duration.py has the tests.",
    (
        "duration.py",
        '''def parse_duration(text):
    """Seconds in a duration like "1h30m", "45s" or "2h5s" (units h, m, s, each at most once,
    in that order); ValueError for anything else, including an empty string."""
    raise NotImplementedError
''',
    ),
    (
        "test_duration.py",
        """import unittest

from duration import parse_duration


class DurationTest(unittest.TestCase):
    def test_units(self):
        self.assertEqual(parse_duration("45s"), 45)
        self.assertEqual(parse_duration("1h30m"), 5400)
        self.assertEqual(parse_duration("2h5s"), 7205)

    def test_bad(self):
        for text in ("", "5", "1x", "30m1h"):
            with self.assertRaises(ValueError):
                parse_duration(text)
""",
    ),
    '''import re

PATTERN = re.compile(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?")


def parse_duration(text):
    """Seconds in a duration like "1h30m", "45s" or "2h5s" (units h, m, s, each at most once,
    in that order); ValueError for anything else, including an empty string."""
    found = PATTERN.fullmatch(text)
    if not text or found is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(g) if g else 0 for g in found.groups())
    return hours * 3600 + minutes * 60 + seconds
''',
)

STACK = py_task(
    "py-stack-peek",
    "feature",
    "Add a peek() method to Stack in stack.py: it returns the top item without removing it and "
    "raises IndexError on an empty stack. test_stack.py has the tests.",
    (
        "stack.py",
        '''class Stack:
    """Last in, first out."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        return self._items.pop()

    def __len__(self):
        return len(self._items)
''',
    ),
    (
        "test_stack.py",
        """import unittest

from stack import Stack


class StackTest(unittest.TestCase):
    def test_peek(self):
        stack = Stack()
        stack.push(1)
        stack.push(2)
        self.assertEqual(stack.peek(), 2)
        self.assertEqual(len(stack), 2)

    def test_peek_empty(self):
        with self.assertRaises(IndexError):
            Stack().peek()
""",
    ),
    '''class Stack:
    """Last in, first out."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        return self._items.pop()

    def peek(self):
        if not self._items:
            raise IndexError("peek at an empty stack")
        return self._items[-1]

    def __len__(self):
        return len(self._items)
''',
)
