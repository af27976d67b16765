/*
** query.h — answers to the recipe's questions about one profile_summary.v1
** document (query.c): query_profile_summary(summary, question, top_k) of
** docs/spec/tools.md §2.
**
** Conventions: SQLite's allocator only; the returned tree is freed with
** jFree().  Nothing keeps state between calls.
*/
#ifndef PROFSUM_QUERY_H
#define PROFSUM_QUERY_H

#include "profsum_int.h"
#include "jsontree.h"

/* Default top_k of the query (tools-spec §1). */
#define PROFSUM_QUERY_TOP_K 10

/*
** The answer object of tools-spec §2 for document pDoc (a v1 tree as
** profsumDocRoot() returns it; read leniently: a missing section is an
** empty list, a missing member null) and question zQ (UTF-8, nQ bytes or
** up to the NUL when nQ < 0).  topK < 0 slices like Python's list[:topK].
** Returns a new tree with "query_type" and the intent's members, or 0 when
** out of memory.
*/
JNode *profsumQueryDoc(const JNode *pDoc, const char *zQ, int nQ, int topK);

/*
** The intent (query_type) profsumQueryDoc answers question zQ with (nQ
** bytes, or up to the NUL when nQ < 0), or 0 when out of memory.
** *pbAsked is 0 when the question matched no intent and the answer is only
** the fallback (the optimization candidates) for a question not about what
** to do next: the caller may say that it was not understood.
*/
const char *profsumQueryKind(const char *zQ, int nQ, int *pbAsked);

/* Register profsum_query_json(trace, question [, top_k]). */
int profsumRegisterQuery(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_QUERY_H */
