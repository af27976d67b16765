/*
** jsontree.h — a small JSON document tree with Python-compatible output
** (jsontree.c).  Used to build profile_summary.v1 and the other documents
** profsum writes, and to read v1 files back.
**
** Output is byte-identical to Python's json.dumps(obj, indent=2,
** sort_keys=True): keys sorted by code point (UTF-8 byte order), ", "/": "
** separators with newlines, ensure_ascii escapes, float repr; or, from
** profsumJsonCompact(), to json.dumps(obj, sort_keys=True).
*/
#ifndef PROFSUM_JSONTREE_H
#define PROFSUM_JSONTREE_H

#include "profsum_int.h"
#include "pytext.h"       /* PROFSUM_PY_INT_MAX_DIGITS */

#define JT_NULL   0
#define JT_FALSE  1
#define JT_TRUE   2
#define JT_INT    3
#define JT_REAL   4
#define JT_STRING 5
#define JT_ARRAY  6
#define JT_OBJECT 7

/* JNode.flags (private to jsontree.c: what jFree() gives back) */
#define JF_KEY_LIT  0x01  /* zKey is not owned: a string literal (jSetLit) or
                          ** in the arena of the object it was set in */
#define JF_Z_INLINE 0x02  /* z lies in the node's own allocation (jStr) */
#define JF_ARENA    0x04  /* the node lies in an arena (jArenaBegin) */
#define JF_A_ARENA  0x08  /* a (the child array) lies in an arena */

typedef struct JNode JNode;
struct JNode {
  /* Small fields first: 56 bytes on LP64 instead of 72 (a parsed document
  ** has one node per value, see jParse()). */
  unsigned char type;   /* JT_* */
  unsigned char oom;    /* set on the root when an allocation failed */
  unsigned char flags;  /* JF_*: which of the node, z, zKey and a it does not own */
  int n;                /* JT_STRING: length */
  sqlite3_int64 i;      /* JT_INT */
  double r;             /* JT_REAL */
  char *z;              /* JT_STRING: value (NUL-terminated; owned, or in the
                        ** node's own allocation with JF_Z_INLINE) */
  char *zKey;           /* key when a member of an object (owned, or a
                        ** literal with JF_KEY_LIT); read-only either way */
  JNode **a;            /* JT_ARRAY / JT_OBJECT: children (the nodes owned;
                        ** the array too unless JF_A_ARENA) */
  int nChild, nAlloc;
};

/* Arenas.  Between jArenaBegin() and jArenaEnd() the nodes this thread
** builds, their keys (jSet) and their child arrays are carved out of the
** arena's blocks instead of one sqlite3_malloc64() each: a summary document
** is some 3,000 nodes, and an allocation and a free per node, each taking
** SQLite's memory mutex, were a fifth of the time to build and write one.
** Trees so built are used and freed as any other (jFree() skips what lies
** in an arena and frees the rest: a node from outside attached to them,
** parsed strings); jArenaFree() then gives the blocks back, and must come
** after jFree() of every tree that holds nodes of that arena — every node
** constructed while it is open (a typical owner: the document that holds
** the tree and its arena; jClone() a node into a tree that outlives the
** arena, never attach it).  A tree may be changed
** after jArenaEnd(), or while another arena is open: its growth then goes
** to the heap (only a node of the open arena grows in it).  Begin and end
** pair up in one thread and nest, ended in the reverse order (an inner
** pair restores the outer arena); free an arena after its end.
** jArenaBegin() returns SQLITE_OK or SQLITE_NOMEM (*ppArena 0, nothing
** changed); a failed allocation inside the arena is an out-of-memory
** constructor as always.  jArenaFree(0) does nothing. */
typedef struct JArena JArena;
int jArenaBegin(JArena **ppArena);
void jArenaEnd(JArena *pArena);
void jArenaFree(JArena *pArena);

/* Constructors: return a new node or 0 when out of memory. */
JNode *jNull(void);
JNode *jBool(int b);
JNode *jInt(sqlite3_int64 v);
JNode *jReal(double v);
JNode *jStr(const char *z, int n);      /* n < 0: up to the NUL; z==0 → null */
JNode *jArr(void);
JNode *jObj(void);

/* Append child to an array, or set key → child in an object.  When the
** object has a member with that key already (keys compare as C strings),
** that member is freed and the child takes its place (same position);
** else the child is appended.  jSet() looks for the key linearly: meant for
** building documents, not for objects of many thousand members.  The child
** is owned by the parent afterwards, also on failure (then it is freed and
** the parent's oom flag set).  A NULL child (failed constructor) sets the
** oom flag. */
void jPush(JNode *pArr, JNode *pChild);
void jSet(JNode *pObj, const char *zKey, JNode *pChild);

/* jSet() with a key that is not copied: zKey must be a string literal (or
** other static storage that outlives the tree).  The documents profsum
** builds have thousands of members under a few dozen literal keys; not
** copying each saves an allocation and a free per member. */
void jSetLit(JNode *pObj, const char *zKey, JNode *pChild);

/* jSet() for a key the caller knows pObj does not hold yet (e.g. copying
** the members of another object, whose keys are unique): appended without
** the linear search, so building an object of n members is O(n). */
void jSetNew(JNode *pObj, const char *zKey, JNode *pChild);

/* Remove (and free) every member of pObj named zKey; the others keep their
** order.  Linear. */
void jRemove(JNode *pObj, const char *zKey);

/* Lookups: the member of an object, the i-th element of an array. */
JNode *jGet(const JNode *pObj, const char *zKey);

/* jGet(pObj, zKey), or when pObj has no such member jGet(pObj, zAlias):
** a key with a legacy name (summary-v1 §3.2, e.g. work_proxy_total for
** flop_proxy_total). */
JNode *jGetOr(const JNode *pObj, const char *zKey, const char *zAlias);
JNode *jAt(const JNode *pArr, int i);

/* Deep copy of p (0 → a new null node).  Returns 0 when out of memory. */
JNode *jClone(const JNode *p);

/* Number value of an INT or REAL node (0 otherwise). */
double jNum(const JNode *p);

/* Integer value of an INT or REAL node (0 otherwise): a REAL truncated, NaN
** 0, beyond ±9.2e18 clamped there (a count in a file from elsewhere may say
** 1e300; converting that would be undefined behaviour). */
sqlite3_int64 jNumI64(const JNode *p);

/* True if anything in the tree failed to allocate. */
int jOom(const JNode *p);

void jFree(JNode *p);

/* Serialize as Python json.dumps(indent=2, sort_keys=True) would.
** Returns sqlite3_malloc'd text (no trailing newline) or 0 on OOM. */
char *jDump(const JNode *p);

/*
** Compact JSON as Python's json.dumps(obj, sort_keys=True) writes it (", "
** and ": " separators, no newline, ensure_ascii, float repr): jDump()'s
** text without its newlines and indentation, e.g. one JSONL history line.
** Always ASCII, and never a lone surrogate escape: the bytes of a string
** that are not UTF-8 (an encoded surrogate too) are written as \ufffd.
** Returns sqlite3_malloc'd text (no trailing newline), or 0 when out of
** memory (also when the tree records a failed allocation, as jDump()).
*/
char *profsumJsonCompact(const JNode *p);

/* The most values (nodes: scalars, arrays and objects, each counted once)
** jParse() builds for one document.  A node with its slot in the parent
** takes some 80 bytes (sizeof(JNode) and a pointer), so this bounds a tree
** at about 1.3 GB
** whatever the text (the 512 MiB of a v1 import as "0,0,..." would be 268M
** values, over 20 GB).  Every value but the last takes at least 2 bytes of
** text (its own first byte, and a ',' or ':' or the closing bracket of a
** container), so any document of up to 2 * JT_MAX_VALUES bytes (32 MiB) is
** accepted whatever it holds; the documents profsum reads are far below:
** a profile_summary.v1 of 10 MB has well under 1M values, a W&B response
** (at most 256 MiB of text) a few values per file or run, history files
** are parsed one record at a time. */
#ifndef JT_MAX_VALUES
# define JT_MAX_VALUES (1<<24)
#endif

/* The most digits of an integer beyond int64 that jParse() takes: Python's
** default limit of int() on text (sys.get_int_max_str_digits()), the one
** profsumPyInt keeps. */
#define JT_MAX_INT_DIGITS PROFSUM_PY_INT_MAX_DIGITS

/* Parse JSON text (nJson < 0: up to the NUL) into a tree.  Accepts
** NaN/Infinity/-Infinity as Python does.  Integers without '.'/exponent
** become JT_INT; beyond int64 (up to JT_MAX_INT_DIGITS digits), a JT_REAL
** of their double that keeps the digits as written in z (n: their length;
** a JT_REAL from a fraction or an exponent has z NULL), which jDump()
** writes, as Python keeps the integer exact.  A key repeated in an object is
** read as Python's json.loads() and a sequence of jSet() calls do: one
** member, at the position of the key's first occurrence, with the value of
** its last (keys compare as C strings).  Time O(n log n) in the size of the
** text.  On error returns 0 and sets *pzErr (if pzErr is not 0): "invalid
** JSON at byte N: reason", or "JSON document too large: more than
** JT_MAX_VALUES values ..." (a valid document over the limit is refused
** before any node is built, see jCheckSize()); on OOM returns 0 and leaves
** *pzErr 0. */
JNode *jParse(const char *zJson, int nJson, char **pzErr);

/* An SQL function's options_json: jParse() of a text that must be an
** object.  On error returns 0 with *pRc SQLITE_ERROR and *pzErr
** "options_json is not valid JSON: ..." or "options_json must be a JSON
** object", or SQLITE_NOMEM (*pzErr 0). */
JNode *jParseOptions(const char *zJson, int nJson, int *pRc, char **pzErr);

/* jParse() of a text that may not be JSON (a member of a file, read for
** what it says if it can be): the tree, or 0 with *pRc SQLITE_OK (not
** JSON, or too large) or SQLITE_NOMEM (also when the tree could not be
** built whole, jOom: then freed). */
JNode *jParseQuiet(const char *zJson, int nJson, int *pRc);

/* Whether jParse() would refuse the JSON text (nJson < 0: up to the NUL)
** as too large, found without building anything (one pass over the text,
** no memory): returns SQLITE_OK if not, else SQLITE_TOOBIG and sets
** *pzErr (if pzErr is not 0) to jParse()'s message, which is 0 on OOM.
** For text that is not valid JSON only a guess (the parse reports its
** error).  For a caller that hands the text to other readers first. */
int jCheckSize(const char *zJson, int nJson, char **pzErr);

/* Python repr() of a float into zBuf (>= 32 bytes). */
void jReprDouble(double r, char *zBuf);

/* The value of the 4 hex digits at p (the digits of a \u escape), or 0x110000
** when they are not 4 hex digits (stops at the first other character, the
** NUL included). */
unsigned jHex4(const char *p);

/* Append z[0..n) (UTF-8) to s as a JSON string literal: quote, backslash
** and control characters escaped (\n, \r, \t, else \u00XX), every other
** byte as it is. */
void jAppendJsonStr(sqlite3_str *s, const char *z, int64_t n);

#endif /* PROFSUM_JSONTREE_H */
