/*
** pyformat.h — Python-exact float formatting (pyformat.c).
**
** The reference tool formats floats with Python format specs ({x:.1%},
** {x:.2f}, {x:.3f}, {x:.4f}, {x:.3e}, {x:.4g}); the profsum texts derived
** from it (v1 candidate titles/rationales/evidence, the markdown and HTML
** reports, the track messages) must match byte for byte.  Python rounds
** the exact binary value of the double half-even and prints every digit,
** as glibc's printf does; sqlite3_mprintf() and sqlite3_str_appendf() do
** NOT (they round half-up on ~16 decimal digits: 9/80 -> "11.3%",
** Python "11.2%").  So every float that reaches such a text goes through
** these two functions, never through SQLite's printf.
**
** zFmt is a C printf format (C-locale vsnprintf: '.' as decimal point
** whatever the host process's LC_NUMERIC).  Use it with %.Nf / %.Ne /
** %.Ng for doubles and %% for a literal '%'.  Python equivalents:
**   {x:.Nf}  -> "%.Nf", x            {x:.Ne} -> "%.Ne", x (exponent
**   {x:.N%}  -> "%.Nf%%", x*100.0    has >= 2 digits in both)
**              (Python multiplies by 100 in double first, so must callers)
** Other conversions (%s, %lld, ...) are plain C printf.  Not covered:
** Python prints a negative NaN as "nan", glibc as "-nan".
**
** profsumPyFormat(): the text, sqlite3_malloc'd (free with sqlite3_free),
**   or 0 when out of memory or on an encoding error.
** profsumPyVformat(): the same with a va_list (which it consumes, as
**   vsnprintf does).
** profsumStrAppendPy(): append the text to s; on failure s gets an error
**   code (sqlite3_str_errcode), as with sqlite3_str_appendf.
**
** profsum_int.h includes this header, so every file of the extension
** sees these two functions.
*/
#ifndef PROFSUM_PYFORMAT_H
#define PROFSUM_PYFORMAT_H

#include <sqlite3ext.h>
#include <stdarg.h>

char *profsumPyFormat(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));
char *profsumPyVformat(const char *zFmt, va_list ap) __attribute__((format(printf, 1, 0)));
void profsumStrAppendPy(sqlite3_str *s, const char *zFmt, ...)
  __attribute__((format(printf, 2, 3)));

#endif /* PROFSUM_PYFORMAT_H */
