/*
** wandb_int.h — what the W&B files share above the transport (http.h):
** the description of an artifact version, and the functions one of
** wandb_fetch.c, wandb_runmeta.c, wandb_publish.c, wandb_pyjson.c calls in
** another.  Not used outside ext/net.
**
** Conventions as in http.h: a Wb records the first error; functions
** returning a JNode* return 0 with the error recorded.
**
** Built with PROFSUM_OMIT_NETWORK this header is empty.
*/
#ifndef PROFSUM_WANDB_INT_H
#define PROFSUM_WANDB_INT_H
#ifndef PROFSUM_OMIT_NETWORK

#include "http.h"

/* Description of one artifact version being fetched. */
typedef struct WbArt {
  char *zId, *zEntity, *zProject, *zName, *zType, *zState, *zManifestUrl;
  char *zCreatedAt;
  sqlite3_int64 iVersion;
  char **azAlias; int nAlias;
} WbArt;

/* ---------------------------------------------------------------------
** wandb_pyjson.c
*/

/* Append p to s as Python's json.dumps(p, sort_keys=True) writes it
** (separators ", " and ": ", ensure_ascii).  Out of memory while sorting
** an object appends "\x01oom", which the caller checks for (besides
** sqlite3_str_errcode). */
void wbPyDump(sqlite3_str *s, const JNode *p);

/* ---------------------------------------------------------------------
** wandb_runmeta.c
*/

/* Build run_metadata (summary-v1-tools-spec §8.4) for run e/p/run with the
** given artifact_ref / artifact_name, from the RunInfo query.  Returns the
** object (caller frees) or 0 with the error recorded ("run ... not
** found"). */
JNode *wbRunMetadata(Wb *p, const char *zE, const char *zP,
                     const char *zRun, const char *zArtRef,
                     const char *zArtName);

/* Best effort: run_metadata of the run that logged artifact a
** (ArtifactCreatedBy), else the minimal metadata (only artifact_ref and
** artifact_name set).  Never fails except for out of memory. */
JNode *wbArtifactMetadata(Wb *p, const WbArt *a, const char *zRef);

#endif /* !PROFSUM_OMIT_NETWORK */
#endif /* PROFSUM_WANDB_INT_H */
