/*
** nearfmt.h — a figure written so that it never reads as a threshold it
** is not (the KPI explanations, advice titles and report notes).
*/
#ifndef PROFSUM_NEARFMT_H
#define PROFSUM_NEARFMT_H

#include "profsum_int.h"

/* Append x with d decimals (clamped to 0..9), and with as many more as it
** takes (up to 9, then 15 significant digits) when that text is the text
** of the multiple of step nearest to x while x is not that multiple:
** 20.026 with one decimal and step 5 is "20.03", not "20.0".  A step that
** is not positive formats with d decimals alone; |x| >= 1e15 is written
** with 15 significant digits.  Out of memory is left in s's error code. */
void profsumStrAppendNear(sqlite3_str *s, double x, int d, double step);

#endif /* PROFSUM_NEARFMT_H */
