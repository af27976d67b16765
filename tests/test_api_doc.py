"""docs/api.md lists every SQL function and module profsum registers, and
its views-and-tables section is what profsum_catalog says.

  /usr/bin/python3 tests/test_api_doc.py --write   # regenerate that section
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import connect, ROOT  # noqa: E402

API = os.path.join(ROOT, "docs", "api.md")
MARK = re.compile(r"(<!-- catalog:begin -->\n)(.*?)(<!-- catalog:end -->)", re.S)


def catalog_md():
    db = connect()
    out = []
    cur = None
    for obj, kind, pos, col, doc in db.execute(
            "SELECT object, kind, position, column_name, doc FROM profsum_catalog ORDER BY kind DESC, object, position"):
        if pos == 0:
            out.append("\n### `%s` (%s)\n\n%s\n\n| column | meaning |\n|---|---|\n" % (obj, kind, doc))
        else:
            out.append("| `%s` | %s |\n" % (col, doc.replace("|", "\\|")))
    db.close()
    return "".join(out) + "\n"


class ApiDoc(unittest.TestCase):
    def test_every_function_and_module_documented(self):
        text = open(API).read()
        db = connect()
        names = {r[0] for r in db.execute(
            "SELECT name FROM pragma_function_list WHERE name LIKE 'profsum%' OR name LIKE 'wandb%' "
            "OR name IN ('exclusive_time', 'classify_op', 'tf_region')")}
        names |= {r[0] for r in db.execute(
            "SELECT name FROM pragma_module_list WHERE name LIKE 'profsum%' OR name = 'trace_events'")}
        db.close()
        for n in sorted(names):
            self.assertIn("`" + n + "(", text.replace("`" + n + "`", "`" + n + "("), n)

    def test_catalog_section_current(self):
        m = MARK.search(open(API).read())
        self.assertIsNotNone(m)
        self.assertEqual(m.group(2), catalog_md())



class Exports(unittest.TestCase):
    def test_only_the_entry_point_is_exported(self):
        # SQLite dlopens extensions RTLD_GLOBAL: profsum's helpers (jParse,
        # jFree, hmGet, ...) must not be visible to, nor bound by, other
        # libraries of the process (-fvisibility=hidden).
        import ctypes
        from util import SO
        lib = ctypes.CDLL(SO)
        self.assertTrue(hasattr(lib, "sqlite3_profsum_init"))
        for name in ("jParse", "jFree", "jReprDouble", "profsumEngineParse", "profsumWriteRun",
                     "profsumCreateSchema", "profsumSrcRead"):
            with self.subTest(name=name):
                self.assertFalse(hasattr(lib, name))

if __name__ == "__main__":
    if "--write" in sys.argv:
        text = open(API).read()
        open(API, "w").write(MARK.sub(lambda m: m.group(1) + catalog_md() + m.group(3), text))
    else:
        unittest.main()
