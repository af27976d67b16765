/*
** funcs.h — the summary's op-name rules (oprules.c) and exclusive time
** (exclusive.c): the C helpers behind the pure SQL functions, which
** ext/sql/funcs_sql.c registers.
**
** The summary engine, the report, the query answering and the comparison
** call these directly, without SQL.
** All of them are pure: no globals, no I/O, no locale.  Strings are passed
** as (pointer, byte length) pairs, need not be NUL-terminated and may hold
** any bytes; text is read as UTF-8 (invalid bytes are ordinary non-space,
** non-digit, non-letter characters).  Unless a comment says otherwise a
** function allocates nothing, and any pointer it returns is either a static
** string literal or points into the caller's input.
**
** Semantics follow docs/spec/summary.md, imitating the
** reference Python (str.strip(), re with IGNORECASE, \d, \s) exactly,
** with one documented approximation: the regex word boundary \b treats
** only [A-Za-z0-9_] (and the four letters below) as word characters.
**
** Case-insensitive matching (Python re.IGNORECASE) also folds the four
** non-ASCII code points that Python's re equates with ASCII letters:
** U+0130 and U+0131 (i), U+017F (s), U+212A (k).
*/
#ifndef PROFSUM_FUNCS_H
#define PROFSUM_FUNCS_H

#include <stdint.h>

/* A borrowed slice of a string (not NUL-terminated).  n is 0 for empty. */
typedef struct ProfsumSlice ProfsumSlice;
struct ProfsumSlice {
  const char *z;                /* First byte (points into the caller's input) */
  int n;                        /* Length in bytes */
};

/* A list of path parts (§4.9), each a span into the input string. */
typedef struct ProfsumParts ProfsumParts;
struct ProfsumParts {
  int nPart;                    /* Number of parts in aPart[] */
  int nAlloc;                   /* Capacity of aPart[] */
  ProfsumSlice *aPart;          /* aStatic or a sqlite3_malloc'd array */
  ProfsumSlice aStatic[16];     /* Inline storage for the common case */
};

/* ---------------------------------------------------------------------
** Names and categories (§1.4, §4.7).
*/

/* True if the stall regex (case-insensitive search) matches z[0..n). */
int profsumIsStallName(const char *z, int n);

/* True if the ASCII-lower-cased z[0..n) contains a communication
** substring (§1.4; `descend` is one, `all_reduce` is not). */
int profsumIsCommName(const char *z, int n);

/* Op category: "stall", "communication" or "compute" (static string). */
const char *profsumOpCategory(const char *z, int n);

/* Event category (§1.4): "stall", "host", "communication", "compute" or
** "other" (static string).  zProc==0 means the event has no process name. */
const char *profsumEventCategory(const char *zName, int nName,
                                 const char *zProc, int nProc);

/* Collective name (§4.7) of a communication-named op, as a static string
** ("all-reduce", ..., "other-collective"); 0 if z is not a communication
** name (profsumIsCommName() false). */
const char *profsumCollective(const char *z, int n);

/* Canonical op name (§1.4): strip Python whitespace, leading '%' chars,
** then one trailing \.\d+$ (\d = any Unicode decimal digit).  Returns a
** span into z (possibly empty). */
ProfsumSlice profsumCanonicalOp(const char *z, int n);

/* ---------------------------------------------------------------------
** Semantics (§4.6).
*/

/* classify_semantic_family() with the extended pattern list.  The text
** matched is canonical(zName) plus " " + zPath when zPath is non-zero and
** nPath > 0.  On success *pzFamily is a static string ("other" when no
** pattern matches).  Returns SQLITE_OK, or SQLITE_NOMEM (a long text needs
** a temporary buffer). */
int profsumSemanticFamily(const char *zName, int nName,
                          const char *zPath, int nPath,
                          const char **pzFamily);

/* extract_shape_signature(): on SQLITE_OK *pzSig is a NUL-terminated
** string from sqlite3_malloc64 (the caller frees it with sqlite3_free) and
** *pnSig its length, or *pzSig is 0 when there is no signature.  The
** signature may be the empty string (a token like `f32[ ]`), exactly as in
** the reference.  Returns SQLITE_OK or SQLITE_NOMEM. */
int profsumShapeSignature(const char *z, int n, char **pzSig, int *pnSig);

/* Results of profsumFlopProxy(). */
#define PROFSUM_FLOP_NULL 0     /* No proxy (reference: None) */
#define PROFSUM_FLOP_INT  1     /* *piVal holds the proxy */
#define PROFSUM_FLOP_REAL 2     /* Overflowed int64: *prVal holds it */

/* estimate_flop_proxy(family, signature).  Returns one of the
** PROFSUM_FLOP_* codes above. */
int profsumFlopProxy(const char *zFamily, int nFamily,
                     const char *zSig, int nSig,
                     int64_t *piVal, double *prVal);

/* ---------------------------------------------------------------------
** Region paths (§4.9).
*/

/* True if a path piece is blacklisted (§4.9 blacklist test, mainline list:
** without the B-variant's `command_buffer`). */
int profsumIsBlacklistedSegment(const char *z, int n);

/* Canonicalize one tf_op piece (§4.9 rule 1: trim, unwrap jit(...) and the
** other wrappers, dynamic_donated rule).  Returns a span into z, empty when
** the piece canonicalizes to nothing. */
ProfsumSlice profsumCanonicalTfOpPiece(const char *z, int n);

/* Initialize an empty parts list (no allocation). */
void profsumPartsInit(ProfsumParts *p);

/* Free the heap storage of a parts list and empty it.  Safe to call on an
** initialized list any number of times. */
void profsumPartsClear(ProfsumParts *p);

/* The §4.9 rule-1 parts of a tf_op string: split on '/', skip
** whitespace-only pieces, canonicalize, drop empty and blacklisted ones.
** p must be initialized; it is emptied first.  p->nPart may be 0.
** Returns SQLITE_OK or SQLITE_NOMEM (then p is empty). */
int profsumTfOpParts(const char *z, int n, ProfsumParts *p);

/* All of §4.9 (_hierarchical_parts): rule 1 from zTfOp (zTfOp may be 0),
** else rule 2 (split zName on "=>", else on "::"), else rule 3 (the single
** canonical op name).  *pbFallback (if not 0) is set when the result is
** exactly one part equal to the canonical name (_is_fallback_parts).
** Returns SQLITE_OK or SQLITE_NOMEM (then p is empty). */
int profsumHierarchyParts(const char *zName, int nName,
                          const char *zTfOp, int nTfOp,
                          ProfsumParts *p, int *pbFallback);

/* Join the first nMax parts (all if nMax <= 0 or larger than nPart) with
** "=>".  Returns a NUL-terminated string from sqlite3_malloc64 (caller
** frees) and sets *pn (if not 0) to its length, or returns 0 when out of
** memory.  An empty list gives "". */
char *profsumPartsJoin(const ProfsumParts *p, int nMax, int *pn);

/* ---------------------------------------------------------------------
** Exclusive time (§2).
**
** One track's events in input order, all with aDur[i] > 0.  Writes the
** exclusive time of event i to aExcl[i].  Order (ts asc, end desc), ties
** in input order; stack sweep; finalize = max(0, dur - child_sum), the
** parent's child_sum grows by the child's full dur.  The int64 variant is
** exact (ends and child sums are kept in 128 bits); the double variant
** imitates the reference's float arithmetic step for step.  Returns
** SQLITE_OK or SQLITE_NOMEM (aExcl then undefined).
*/
int profsumExclusiveInt64(int n, const int64_t *aTs, const int64_t *aDur,
                          int64_t *aExcl);
int profsumExclusiveDouble(int n, const double *aTs, const double *aDur,
                           double *aExcl);

#endif /* PROFSUM_FUNCS_H */
