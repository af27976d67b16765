/*
** utf8rule.h — the rule for text profsum stores from its callers: valid
** UTF-8 (RFC 3629: no overlong form, no encoded surrogate, nothing beyond
** U+10FFFF, no cut sequence) and no U+0000, which SQLite's C interfaces and
** json_extract() end a text at.
*/
#ifndef PROFSUM_UTF8RULE_H
#define PROFSUM_UTF8RULE_H

/* Length of the UTF-8 sequence at u (2 to 4 bytes), or 0 when the bytes
** from u (before e) are not one.  Requires u[0] >= 0x80. */
int profsumUtf8SeqLen(const unsigned char *u, const unsigned char *e);

/* 1 when z[0..n) keeps the rule (valid UTF-8, no U+0000), else 0. */
int profsumTextKeepsRule(const char *z, sqlite3_int64 n);

/* 1 when z[0..n) breaks the rule, with *pzErr (sqlite3_malloc'd; 0 when
** out of memory) "<zWhat> holds U+0000 (a NUL byte at byte N), which
** SQLite text cannot keep whole" or "<zWhat> is not valid UTF-8 (byte 0xXX
** at byte N)"; 0 when it keeps the rule. */
int profsumTextArgFault(const char *zWhat, const char *z, int n, char **pzErr);

/* The message z (sqlite3_malloc'd, may be 0) as valid UTF-8: itself when it
** is; else a new text with U+FFFD for every byte that starts no UTF-8
** sequence, z freed (out of memory: those bytes become '?' in z).  Error
** messages quote what callers and files give (a path is bytes on Linux),
** and a reader that decodes the message strictly (Python's sqlite3) would
** otherwise report a decoding error instead of the message. */
char *profsumUtf8Scrub(char *z);

#endif /* PROFSUM_UTF8RULE_H */
