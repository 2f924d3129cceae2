"""safe_repr: bounded previews that never run user code."""

import collections

from hello_tui_kernel.safe_repr import approx_size, safe_repr


def preview(obj, chars=160, items=8, depth=2, string=80):
    return safe_repr(obj, chars, items, depth, string)


class Trap:
    """Every hook a careless repr would call raises."""

    def __repr__(self):
        raise AssertionError("__repr__ ran")

    def __len__(self):
        raise AssertionError("__len__ ran")

    def __iter__(self):
        raise AssertionError("__iter__ ran")

    def __getattr__(self, name):
        raise AssertionError("__getattr__ ran for " + name)

    @property
    def shape(self):
        raise AssertionError("a user property ran")


def test_user_code_never_runs():
    assert preview(Trap()) == "<Trap object>"
    assert preview([Trap(), {"k": Trap()}]) == "[<Trap object>, {'k': <Trap object>}]"


def test_plain_values_read_as_python():
    assert preview(42) == "42"
    assert preview("hi") == "'hi'"
    assert preview([1, 2, 3]) == "[1, 2, 3]"
    assert preview((1,)) == "(1,)"
    assert preview({"a": 1}) == "{'a': 1}"
    assert preview(set()) == "set()"


def test_items_depth_and_strings_are_bounded():
    assert preview(list(range(100)), items=3) == "[0, 1, 2, …+97]"
    assert preview([[[[1]]]], depth=2) == "[[[…1]]]"
    long = "x" * 500
    text = preview(long, string=10)
    assert text == repr("x" * 10) + "…(500 chars)"
    assert len(preview(list(range(10**6)), chars=50)) <= 51


def test_named_tuples_and_instances_show_fields():
    Point = collections.namedtuple("Point", "x y")
    assert preview(Point(1, 2)) == "Point(x=1, y=2)"

    class Box:
        def __init__(self):
            self.width = 3
            self._hidden = 4

    assert preview(Box()) == "test_named_tuples_and_instances_show_fields.<locals>.Box(width=3)"


def test_array_like_objects_show_shape_and_dtype_without_their_code():
    class Array:
        def __init__(self):
            self.shape = (3, 4)
            self.dtype = "float64"

    assert preview(Array()) == "Array(shape=(3, 4), dtype=float64)"


def test_huge_ints_and_failing_objects_do_not_blow_up():
    assert preview(10**400) == "<int 1329 bits>"
    class Sized:
        def __sizeof__(self):
            raise AssertionError("a user __sizeof__ ran")

    assert approx_size(Sized()) is None
    assert approx_size([1, 2, 3]) > 0
