/*
** pytext.h — Python's reading of text, for the rules the reference tool
** applies to names in Python (pytext.c): str.isspace() and str.strip(),
** the decimal digits of re's \d and int(), and int() of a str.
**
** Other Python imitations: pycompat.h lists where they live.
**
** Conventions: no allocation, no state; texts are byte spans of UTF-8
** that may hold invalid sequences (each invalid byte is one character that
** is no space and no digit, as Python's surrogateescape would make it).
*/
#ifndef PROFSUM_PYTEXT_H
#define PROFSUM_PYTEXT_H

#include <stdint.h>

/* Returned by profsumUtf8Decode for a byte that does not start a valid,
** complete UTF-8 sequence. */
#define PROFSUM_BADBYTE (-1)

/* The code point of the UTF-8 sequence that starts at z[i] (i < n), its
** length in bytes in *pLen; PROFSUM_BADBYTE with length 1 for a byte that
** does not start a complete, shortest-form sequence (an encoded surrogate,
** which no valid UTF-8 holds, decodes as its code point). */
int profsumUtf8Decode(const unsigned char *z, int64_t n, int64_t i, int *pLen);

/* The start of the character that ends at z[e-1] (e > i, no byte before
** z[i] looked at), its code point in *pc: the lead byte of a sequence
** that profsumUtf8Decode reads as ending exactly there, else e-1 with
** PROFSUM_BADBYTE (a lone byte). */
int64_t profsumUtf8Before(const unsigned char *z, int64_t i, int64_t e, int *pc);

/* 1 when code point c is whitespace to Python (str.isspace(), strip(), re's
** \s, int()): the 29 code points, ASCII 0x09-0x0D and 0x1C-0x20 among them. */
int profsumPyIsSpace(int c);

/* 1 when code point c is a word character to Python's re \w in a str
** pattern (and so to \b): letters, digits and numbers of every script,
** and '_'. */
int profsumPyIsWord(int c);

/* The value 0-9 of code point c when it is a Unicode decimal digit (general
** category Nd: re's \d, what int() reads), else -1. */
int profsumPyDigit(int c);

/* profsumPyStrip's work once an end is not an ASCII byte above the space. */
void profsumPyStripAny(const unsigned char *z, int64_t *pi, int64_t *pe);

/* Python str.strip() on z[*pi..*pe): *pi moves past leading whitespace, *pe
** back before trailing whitespace.  Both must be code point boundaries.
** Most texts start and end with an ASCII byte above the space, which no
** whitespace is: they are left at once, without a call. */
static inline void profsumPyStrip(const unsigned char *z, int64_t *pi, int64_t *pe){
  int64_t i = *pi, e = *pe;
  if( i<e && z[i]>0x20 && z[i]<0x80 && z[e-1]>0x20 && z[e-1]<0x80 ) return;
  profsumPyStripAny(z, pi, pe);
}

/* Python int() of the str z[0..n): surrounding whitespace (ASCII's
** " \t\n\v\f\r" and the non-ASCII whitespace of str.isspace(): not
** 0x1C-0x1F), an optional sign, decimal digits (any script) with single
** underscores between them.
** 0 with *pOut set; -1 when int() refuses it (also for more than
** PROFSUM_PY_INT_MAX_DIGITS digits, Python's default limit of integer
** text); -2 when int() reads it but its value is outside 64 bits (callers
** that only ask "== 0" see both as no value). */
#define PROFSUM_PY_INT_MAX_DIGITS 4300
int profsumPyInt(const char *z, int64_t n, int64_t *pOut);

#endif /* PROFSUM_PYTEXT_H */
