"""The starter suite's Python tasks (checked with `python3 -m unittest`)."""

from __future__ import annotations

from frogdesk.evals.starter.build import py_task
from frogdesk.evals.starter.python_more import DURATION, ROMAN, SLUG, STACK, WORDS

MEDIAN = py_task(
    "py-median",
    "bugfix",
    "The tests in test_stats.py fail. Fix the bug in stats.py so that they pass.",
    (
        "stats.py",
        '''"""Small statistics helpers."""


def median(values):
    """The median of a non-empty list of numbers."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
''',
    ),
    (
        "test_stats.py",
        """import unittest

from stats import median


class MedianTest(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_one(self):
        self.assertEqual(median([7]), 7)


if __name__ == "__main__":
    unittest.main()
""",
    ),
    '''"""Small statistics helpers."""


def median(values):
    """The median of a non-empty list of numbers."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
''',
)

FIZZBUZZ = py_task(
    "py-fizzbuzz",
    "bugfix",
    "The tests in test_fizzbuzz.py fail. Fix the bug in fizzbuzz.py so that they pass.",
    (
        "fizzbuzz.py",
        '''def fizzbuzz(n):
    """'Fizz' for multiples of 3, 'Buzz' for 5, 'FizzBuzz' for both, else the number."""
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    if n % 15 == 0:
        return "FizzBuzz"
    return str(n)
''',
    ),
    (
        "test_fizzbuzz.py",
        """import unittest

from fizzbuzz import fizzbuzz


class FizzBuzzTest(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(fizzbuzz(7), "7")

    def test_fizz_and_buzz(self):
        self.assertEqual(fizzbuzz(9), "Fizz")
        self.assertEqual(fizzbuzz(10), "Buzz")

    def test_both(self):
        self.assertEqual(fizzbuzz(15), "FizzBuzz")
        self.assertEqual(fizzbuzz(45), "FizzBuzz")
""",
    ),
    '''def fizzbuzz(n):
    """'Fizz' for multiples of 3, 'Buzz' for 5, 'FizzBuzz' for both, else the number."""
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)
''',
)

LEAP = py_task(
    "py-leap-year",
    "bugfix",
    "The tests in test_dates.py fail. Fix the bug in dates.py so that they pass.",
    (
        "dates.py",
        '''def is_leap(year):
    """True for a leap year of the Gregorian calendar."""
    return year % 4 == 0
''',
    ),
    (
        "test_dates.py",
        """import unittest

from dates import is_leap


class LeapTest(unittest.TestCase):
    def test_ordinary(self):
        self.assertTrue(is_leap(2024))
        self.assertFalse(is_leap(2023))

    def test_centuries(self):
        self.assertFalse(is_leap(1900))
        self.assertTrue(is_leap(2000))
""",
    ),
    '''def is_leap(year):
    """True for a leap year of the Gregorian calendar."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
''',
)

CHUNKS = py_task(
    "py-chunks",
    "bugfix",
    "The tests in test_chunks.py fail. Fix the bug in chunks.py so that they pass.",
    (
        "chunks.py",
        '''def chunks(items, size):
    """The list cut into pieces of `size` items; the last piece may be shorter."""
    out = []
    for start in range(0, len(items) - size + 1, size):
        out.append(items[start : start + size])
    return out
''',
    ),
    (
        "test_chunks.py",
        """import unittest

from chunks import chunks


class ChunksTest(unittest.TestCase):
    def test_even(self):
        self.assertEqual(chunks([1, 2, 3, 4], 2), [[1, 2], [3, 4]])

    def test_rest(self):
        self.assertEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]])

    def test_empty(self):
        self.assertEqual(chunks([], 3), [])
""",
    ),
    '''def chunks(items, size):
    """The list cut into pieces of `size` items; the last piece may be shorter."""
    out = []
    for start in range(0, len(items), size):
        out.append(items[start : start + size])
    return out
''',
)

DEFAULTS = py_task(
    "py-shared-default",
    "bugfix",
    "The tests in test_cart.py fail: two carts share their items. Fix the bug in cart.py.",
    (
        "cart.py",
        '''def add_item(item, items=[]):
    """A list of items with `item` appended; a new list when none is given."""
    items.append(item)
    return items
''',
    ),
    (
        "test_cart.py",
        """import unittest

from cart import add_item


class CartTest(unittest.TestCase):
    def test_fresh_lists(self):
        self.assertEqual(add_item("apple"), ["apple"])
        self.assertEqual(add_item("pear"), ["pear"])

    def test_given_list(self):
        mine = ["milk"]
        self.assertEqual(add_item("eggs", mine), ["milk", "eggs"])
        self.assertEqual(mine, ["milk", "eggs"])
""",
    ),
    '''def add_item(item, items=None):
    """A list of items with `item` appended; a new list when none is given."""
    if items is None:
        items = []
    items.append(item)
    return items
''',
)

SEARCH = py_task(
    "py-binary-search",
    "bugfix",
    "The tests in test_search.py fail. Fix the bug in search.py so that they pass.",
    (
        "search.py",
        '''def find(sorted_items, target):
    """The index of `target` in the sorted list, or -1 when it is not there."""
    lo, hi = 0, len(sorted_items) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_items[mid] == target:
            return mid
        if sorted_items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
''',
    ),
    (
        "test_search.py",
        """import unittest

from search import find


class FindTest(unittest.TestCase):
    def test_every_position(self):
        items = [1, 3, 5, 7, 9, 11]
        for index, value in enumerate(items):
            self.assertEqual(find(items, value), index)

    def test_missing(self):
        self.assertEqual(find([1, 3, 5], 4), -1)
        self.assertEqual(find([], 4), -1)
""",
    ),
    '''def find(sorted_items, target):
    """The index of `target` in the sorted list, or -1 when it is not there."""
    lo, hi = 0, len(sorted_items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if sorted_items[mid] == target:
            return mid
        if sorted_items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
''',
)

PYTHON_TASKS = (
    MEDIAN,
    FIZZBUZZ,
    LEAP,
    CHUNKS,
    DEFAULTS,
    SEARCH,
    ROMAN,
    WORDS,
    SLUG,
    DURATION,
    STACK,
)
"""Bug fixes first (the real-model bench takes its five from the front)."""
