/*
** psfmt.h — picosecond times (profsum_ps) written as exact decimal
** microseconds.
*/
#ifndef PROFSUM_PSFMT_H
#define PROFSUM_PSFMT_H

#include "profsum_int.h"

/* Append v picoseconds as exact microseconds: the integer part, then up
** to 6 decimals without trailing zeros (valid as a JSON number). */
void profsumStrAppendMicros(sqlite3_str *s, profsum_ps v);

#endif /* PROFSUM_PSFMT_H */
