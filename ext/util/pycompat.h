/*
** pycompat.h — imitating Python: the text the reference tool's Python
** writes for a time and a path, and Python's truthiness and == on JSON
** values (pycompat.c).
**
** Other Python imitations live beside this file or with their users:
** Python's %-formatting of floats in pyformat.c (profsumPyFormat), the
** float repr of json.dumps in jsontree.c (jReprDouble), str.isspace(),
** str.strip(), the digits of re's \d and int() of a str in pytext.c, the
** op-name regexes in ext/summary/oprules.c, the ordering of
** pathlib.PurePosixPath in ext/reader/find.c.
**
** Conventions: SQLite's allocator only; nothing keeps state between calls.
*/
#ifndef PROFSUM_PYCOMPAT_H
#define PROFSUM_PYCOMPAT_H

#include "profsum_int.h"
#include "jsontree.h"

/*
** The current UTC time as Python's datetime.now(UTC).isoformat() with
** "+00:00" replaced by "Z" (microseconds, omitted when exactly 0), into
** zBuf of nBuf (>= 32) bytes.
*/
void profsumNowIso(char *zBuf, int nBuf);

/*
** The same with the microseconds always written (".000000" at a whole
** second): texts of one width, whose order as text is their order in
** time (a stored imported_at, which the series views order runs by).
*/
void profsumNowIsoUs(char *zBuf, int nBuf);

/*
** zIso, a time as profsumNowIso writes it, with its microseconds written
** when it has none ("...T12:32:53Z" gives "...T12:32:53.000000Z", in zBuf
** of nBuf bytes); any other text (0 included) is returned as it is.
*/
const char *profsumIsoWithUs(const char *zIso, char *zBuf, int nBuf);

/*
** str(pathlib.PurePosixPath(z)), the text Python gives a path that argparse
** parsed with type=Path: repeated and trailing slashes collapsed, "."
** components dropped ("" and "." give "."; a leading "//" is kept as POSIX
** says; ".." is kept).  Used for the bundle manifest and by the CLI for
** every argument the reference types as a Path.  Returns a
** sqlite3_malloc'd string, or 0 when out of memory.
*/
char *profsumPyPathStr(const char *z);

/* Python truthiness of a JSON value (absent, 0 here, is None: false). */
int profsumPyTruthy(const JNode *p);

/* Python == on two JSON values (absent = None; 1 == 1.0 == true; deep for
** containers, object member order ignored). */
int profsumPyEq(const JNode *a, const JNode *b);

#endif /* PROFSUM_PYCOMPAT_H */
