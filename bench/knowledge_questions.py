"""Questions for bench/knowledge_quality.py, written by hand before any system was run on them:
each as a person would ask it, in their own words, with the document that answers it (a
`pydoc_data` topic, or a standard-library module by its path) and a phrase the answering
passage holds (a chunk of that document holding the phrase is relevant)."""

from __future__ import annotations

QUESTIONS: list[tuple[str, str, str]] = [
    (
        "How can I make my own object work with the with statement?",
        "topics/context-managers",
        "__enter__",
    ),
    (
        "What happens to the else block of a loop when I break out of it early?",
        "topics/for",
        'without executing the "else" clause',
    ),
    (
        "How do I write a number in hexadecimal or binary in my source code?",
        "topics/integers",
        "hexinteger",
    ),
    (
        "Can a function change a variable that was defined outside of it?",
        "topics/global",
        'The "global" statement is a declaration',
    ),
    (
        "How do I show a big number with commas between the thousands?",
        "topics/formatstrings",
        "thousands separator",
    ),
    ("How do I pad a string with zeros on the left?", "topics/string-methods", "zfill"),
    (
        "Does a dict remember the order I put the keys in?",
        "topics/typesmapping",
        "Dictionaries preserve insertion order",
    ),
    (
        "What is the difference between is and == when comparing objects?",
        "topics/comparisons",
        "test for an object’s identity",
    ),
    (
        "Can one except clause handle several kinds of errors?",
        "topics/try",
        "a tuple containing an",
    ),
    ("How do I run cleanup code whether or not an error happened?", "topics/try", "cleanup"),
    (
        "How do I define what my object does when someone adds it to another with plus?",
        "topics/numeric-types",
        "__add__",
    ),
    (
        "How does Python decide whether an object counts as true in an if statement?",
        "topics/truth",
        "__bool__",
    ),
    (
        "What do I need so that instances of my class can be used as dictionary keys?",
        "topics/customization",
        "__hash__",
    ),
    (
        "How do I turn all the letters of a string into capitals?",
        "topics/string-methods",
        "str.upper()",
    ),
    (
        "How do I take every second element of a list?",
        "topics/typesseq",
        "slice of *s* from *i* to *j* with step *k*",
    ),
    (
        "Can I put the items of a list into separate variables in one line, with the rest"
        " collected?",
        "topics/assignment",
        "starred",
    ),
    ("How do I write a small nameless function inline?", "topics/lambda", "anonymous functions"),
    (
        "What does a star in front of a parameter name mean in a def?",
        "topics/function",
        "excess positional",
    ),
    (
        "What makes a function a generator instead of a normal function?",
        "topics/yield",
        "create a generator function",
    ),
    (
        "How do I remove the element at a given position from a list and get it back?",
        "topics/typesseq-mutable",
        "s.pop",
    ),
    (
        "How can I stop my program at a line and inspect variables to find a bug?",
        "topics/debugger",
        "import pdb; pdb.set_trace()",
    ),
    (
        "How do I put the values of variables inside a string with an f prefix?",
        "topics/strings",
        "in its prefix is a *formatted",
    ),
    ("What error do I get when I divide by zero?", "topics/binary", "ZeroDivisionError"),
    (
        "Moving the bits of a number to the left multiplies it by what?",
        "topics/shifting",
        "A left shift by *n* bits",
    ),
    (
        "How can I keep a priority queue where the smallest item always comes out first?",
        "heapq.py",
        "heappop",
    ),
    ("How do I run an external program and read what it prints?", "subprocess.py", "check_output"),
    (
        "How do I copy a whole folder with everything in it to another place?",
        "shutil.py",
        "copytree",
    ),
    (
        "How do I make a hard-to-guess random string for a password reset link?",
        "secrets.py",
        "token_urlsafe",
    ),
    (
        "How do I read the options given to my script on the command line?",
        "argparse.py",
        "ArgumentParser",
    ),
    (
        "How can I show which lines changed between two versions of a text?",
        "difflib.py",
        "unified_diff",
    ),
    ("How do I find the middle value of a list of numbers?", "statistics.py", "median"),
    (
        "How do I break a long paragraph into lines of at most 70 characters?",
        "textwrap.py",
        "width",
    ),
    ("How do I send an email from Python through a mail server?", "smtplib.py", "sendmail"),
    (
        "Which lock can the thread that holds it acquire again without blocking itself?",
        "threading.py",
        "recursion level",
    ),
    ("How do I turn base64 text back into bytes?", "base64.py", "b64decode"),
    (
        "How do I make a scratch file that disappears when I close it?",
        "tempfile.py",
        "TemporaryFile",
    ),
    (
        "How can I remember results of a slow function so repeated calls are fast?",
        "functools.py",
        "lru_cache",
    ),
    ("How do I count how often each word appears in a list?", "collections/__init__.py", "Counter"),
    ("How do I store Python objects in a file and load them back later?", "pickle.py", "Pickler"),
    (
        "How do I turn a string like 192.168.0.0/24 into a network object?",
        "ipaddress.py",
        "ip_network",
    ),
    ("How do I measure how long a small snippet of code takes?", "timeit.py", "Timer"),
    ("How do I pack several files into one compressed archive?", "zipfile/__init__.py", "ZipFile"),
    (
        "How do I escape spaces and special characters so they can go in a web address?",
        "urllib/parse.py",
        "quote",
    ),
    (
        "How do I make sure only one thread at a time changes a shared value?",
        "threading.py",
        "Lock",
    ),
    (
        "How do I split a string on commas into a list of pieces?",
        "topics/string-methods",
        "str.split",
    ),
    (
        "How do I check whether a dictionary already has some key?",
        "topics/typesmapping",
        "key in d",
    ),
    ("How do I combine two dictionaries into a new one?", "topics/typesmapping", "d | other"),
    (
        "Which way does integer division round when the result is negative?",
        "topics/binary",
        "floor",
    ),
    (
        "Why does Python rename attributes that start with two underscores?",
        "topics/atom-identifiers",
        "mangling",
    ),
    ("How do I make abs() work on my own number class?", "topics/numeric-types", "__abs__"),
    (
        "How can I make instances of my class callable like functions?",
        "topics/callable-types",
        "__call__",
    ),
    (
        "How do I copy a nested list so that changing the copy leaves the original alone?",
        "copy.py",
        "deepcopy",
    ),
    ("How do I turn a JSON string into Python objects?", "json/__init__.py", "loads"),
    ("How do I compress data the way .gz files are compressed?", "gzip.py", "compress"),
    (
        "How do I round an amount of money to exactly two decimal places?",
        "_pydecimal.py",
        "quantize",
    ),
    ("How do I set up logging so messages go to a file?", "logging/__init__.py", "basicConfig"),
    ("How do I download a web page given its address?", "urllib/request.py", "urlopen"),
    ("How do I define a set of named constant values?", "enum.py", "Enum"),
    (
        "How do I write a class that just holds data and gets its __init__ written for me?",
        "dataclasses.py",
        "dataclass",
    ),
]
