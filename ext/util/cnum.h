/*
** cnum.h — numbers in text, the same in every locale.
**
** JSON, trace files and Python's repr write numbers with a '.' whatever
** the host's locale.  The C library's strtod() and printf("%e") follow the
** calling thread's LC_NUMERIC, which a host process may set (a notebook
** that calls locale.setlocale(locale.LC_ALL, "") in a German session reads
** "1.5" as 1 and writes "1,5e+00").  Every conversion between text and
** double in the extension goes through these two functions, which use the
** "C" locale whatever the process has set.
*/
#ifndef PROFSUM_CNUM_H
#define PROFSUM_CNUM_H

#include <stddef.h>

/* strtod(z, pzEnd) in the "C" locale: same contract as strtod(3). */
double profsumStrtod(const char *z, char **pzEnd);

/* snprintf(zBuf, n, "%.*e", nPrec, r) in the "C" locale: the shortest
** exponent form with nPrec digits after the point.  Returns what
** snprintf returns. */
int profsumFmtExp(char *zBuf, size_t n, int nPrec, double r);

#endif
