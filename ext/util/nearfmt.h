/*
** nearfmt.h — a figure written so that it never reads as a threshold it
** is not (the KPI explanations, advice titles and report notes).
*/
#ifndef PROFSUM_NEARFMT_H
#define PROFSUM_NEARFMT_H

#include "profsum_int.h"

/* Append x with d decimals (clamped to 0..9), and with as many more as it
** takes (up to 9, then 15 to 17 significant digits, as many as tell x
** from the multiple) when that text is the text of the multiple of step
** nearest to x while x is not that multiple: 20.026 with one decimal and
** step 5 is "20.03", not "20.0"; the double next above 20 is
** "20.000000000000004".  The multiple of a step such as 0.1 is the double
** nearest to it (0.3, not 3 * 0.1): 0.3 with three decimals and step 0.1
** is "0.300".  A step that is not positive formats with d decimals alone;
** |x| >= 1e15 is written with 15 significant digits.  Out of memory is
** left in s's error code. */
void profsumStrAppendNear(sqlite3_str *s, double x, int d, double step);

/* Append x as Python's "%.{sig}g" (sig clamped to 1..17), with as many
** more significant digits (up to 17) as it takes when that text is the
** text of the multiple of step nearest to x while x is not that multiple:
** 0.20004 with 4 digits and step 0.01 is "0.20004", not "0.2".  A step
** that is not positive, or x not finite, formats with sig digits alone.
** Out of memory is left in s's error code. */
void profsumStrAppendNearG(sqlite3_str *s, double x, int sig, double step);

#endif /* PROFSUM_NEARFMT_H */
