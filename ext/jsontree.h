/*
** jsontree.h — a small JSON document tree with Python-compatible output
** (jsontree.c).  Used to build profile_summary.v1 and the other documents
** profsum writes, and to read v1 files back.
**
** Output is byte-identical to Python's json.dumps(obj, indent=2,
** sort_keys=True): keys sorted by code point (UTF-8 byte order), ", "/": "
** separators with newlines, ensure_ascii escapes, float repr.
*/
#ifndef PROFSUM_JSONTREE_H
#define PROFSUM_JSONTREE_H

#include "profsum_int.h"

#define JT_NULL   0
#define JT_FALSE  1
#define JT_TRUE   2
#define JT_INT    3
#define JT_REAL   4
#define JT_STRING 5
#define JT_ARRAY  6
#define JT_OBJECT 7

typedef struct JNode JNode;
struct JNode {
  int type;             /* JT_* */
  sqlite3_int64 i;      /* JT_INT */
  double r;             /* JT_REAL */
  char *z;              /* JT_STRING: value (NUL-terminated, owned) */
  int n;                /* JT_STRING: length */
  char *zKey;           /* key when a member of an object (owned) */
  JNode **a;            /* JT_ARRAY / JT_OBJECT: children (owned) */
  int nChild, nAlloc;
  int oom;              /* set on the root when an allocation failed */
};

/* Constructors: return a new node or 0 when out of memory. */
JNode *jNull(void);
JNode *jBool(int b);
JNode *jInt(sqlite3_int64 v);
JNode *jReal(double v);
JNode *jStr(const char *z, int n);      /* n < 0: up to the NUL; z==0 → null */
JNode *jArr(void);
JNode *jObj(void);

/* Append child to an array, or set key → child in an object (replacing an
** existing key).  The child is owned by the parent afterwards, also on
** failure (then it is freed and the parent's oom flag set).  A NULL child
** (failed constructor) sets the oom flag. */
void jPush(JNode *pArr, JNode *pChild);
void jSet(JNode *pObj, const char *zKey, JNode *pChild);

/* Lookups: the member of an object, the i-th element of an array. */
JNode *jGet(const JNode *pObj, const char *zKey);
JNode *jAt(const JNode *pArr, int i);

/* Deep copy of p (0 → a new null node).  Returns 0 when out of memory. */
JNode *jClone(const JNode *p);

/* Number value of an INT or REAL node (0 otherwise). */
double jNum(const JNode *p);

/* True if anything in the tree failed to allocate. */
int jOom(const JNode *p);

void jFree(JNode *p);

/* Serialize as Python json.dumps(indent=2, sort_keys=True) would.
** Returns sqlite3_malloc'd text (no trailing newline) or 0 on OOM. */
char *jDump(const JNode *p);

/* Parse JSON text (nJson < 0: up to the NUL) into a tree.  Accepts
** NaN/Infinity/-Infinity as Python does.  Integers without '.'/exponent
** become JT_INT (JT_REAL beyond int64).  On error returns 0 and sets
** *pzErr ("invalid JSON at byte N: reason"), or leaves it 0 on OOM. */
JNode *jParse(const char *zJson, int nJson, char **pzErr);

/* Python repr() of a float into zBuf (>= 32 bytes). */
void jReprDouble(double r, char *zBuf);

#endif /* PROFSUM_JSONTREE_H */
