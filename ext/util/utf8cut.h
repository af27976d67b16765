/*
** utf8cut.h — a text cut to a byte budget without splitting a UTF-8
** character: the part of a name or a value that a diagnostic quotes, which
** goes to a TEXT column and so must stay valid UTF-8.
*/
#ifndef PROFSUM_UTF8CUT_H
#define PROFSUM_UTF8CUT_H

#include <stdint.h>

/* The length of the longest prefix of z[0..n) that is at most nMax bytes
** long and ends at a character boundary (n >= 0, nMax >= 0): n when
** n <= nMax; else nMax, or the start of the UTF-8 sequence that byte
** z[nMax] is inside of (nMax minus 1 to 3).  A character is a whole UTF-8
** sequence as utf8rule.h reads one (profsumUtf8SeqLen: RFC 3629), or any
** other byte alone; so a cut of valid UTF-8 is valid UTF-8, a cut never
** splits a valid sequence, and at most 3 bytes below nMax are given up.
** No allocation; of z it reads bytes nMax-3 to nMax+2 at most (those
** below n). */
int64_t profsumUtf8Cut(const char *z, int64_t n, int64_t nMax);

#endif /* PROFSUM_UTF8CUT_H */
