/*
** wandb_int.h — what the W&B files share above the transport (http.h):
** the description of an artifact version, and the functions one of
** wandb_fetch.c, wandb_runmeta.c, wandb_publish.c calls in
** another, and those wandb_sql.c calls.  Not used outside ext/net.
**
** Conventions as in http.h: a Wb records the first error; functions
** returning a JNode* return 0 with the error recorded.
**
** Built with PROFSUM_OMIT_NETWORK this header holds only WB_NONET.
*/
#ifndef PROFSUM_WANDB_INT_H
#define PROFSUM_WANDB_INT_H

/* The error of every W&B entry point in a build without network. */
#define WB_NONET "profsum was built without network support (make NETWORK=0)"

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
** wandb_fetch.c
*/

/* Free the strings of a (zero-initialised or filled) WbArt. */
void wbArtClear(WbArt *a);

/* Split artifact reference "entity/project/name[:alias|:vN]" into
** sqlite3_malloc'd *pzE, *pzP and *pzNameAlias (":latest" appended when no
** alias is given).  Errors name the reference.  Makes no request (p needs
** no wbBegin). */
int wbParseRef(Wb *p, const char *zRef, char **pzE, char **pzP,
               char **pzNameAlias);

/* Fetch artifact reference zRef into zDest (0: the default cache
** directory), describing the version in a (the caller clears it).
** Returns the result object of wandb_fetch (caller frees) or 0 (error
** in p). */
JNode *wbFetchRef(Wb *p, const char *zRef, const char *zDest, WbArt *a);

/* Check the form of run target zTarget (summary-v1-tools-spec §8.1; a
** bare run id completed by zDefE/zDefP) without any request: needs no
** wbBegin, and a URL's host is not checked before wbBegin.  Returns
** p->rc (the error recorded in p). */
int wbCheckRunTarget(Wb *p, const char *zTarget, const char *zDefE, const char *zDefP);

/* Fetch the profile of run target zTarget (a bare run id completed by
** zEnt/zProj): pick the version with alias zAlias, else the newest, fetch
** it into zDest (0: default), read run_metadata.  Returns the result
** object with "run_metadata" and "run" added, or 0 (error in p). */
JNode *wbFetchRun(Wb *p, const char *zTarget, const char *zDest,
                  const char *zEnt, const char *zProj, const char *zAlias,
                  WbArt *a);

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

/* ---------------------------------------------------------------------
** wandb_publish.c
*/

/* One file of the published artifact. */
typedef struct WbPubFile {
  const char *zPath;      /* artifact path: the base name of the file
                          ** given, or profile_summary.json (borrowed) */
  char *zData;            /* the bytes (sqlite3_malloc'd) */
  size_t nData;
  char zDigest[25];       /* base64 MD5 */
  int bUploaded;          /* PUT done (0: the server had the bytes) */
} WbPubFile;

/* What wandb_publish will do. */
typedef struct WbPlan {
  const char *zEntity, *zProject;   /* target (borrowed) */
  const char *zSummaryPath;         /* option summary_path, or 0 (borrowed) */
  const char *zReportPath;          /* option report_path, or 0 (borrowed) */
  char *zName;            /* artifact (collection) name */
  JNode *pAliases;        /* JSON array of alias strings */
  char *zRun;             /* run id to attach to; 0: create a run */
  char zDigest[33];       /* manifest digest, hex (§3.2) */
  JNode *pMeta;           /* artifact metadata (tools-spec §7) */
  WbPubFile aFile[2];     /* the summary, then the report if any; the
                          ** first nFile are used, sorted by path */
  int nFile;              /* 1 or 2 */
  int iSummary;           /* index of the summary in aFile */
} WbPlan;

/* Build the plan of wandb_publish for trace argument pTrace and parsed
** options pOpt (may be 0; an object): *pbDry says whether dry_run was
** asked for.  Errors (options, trace, summary_path, report_path,
** target) are reported on ctx as "wandb_publish: ..." (returns nonzero).
** The caller calls wbPlanClear() in every case and keeps pOpt until then:
** zEntity and zProject borrow from pOpt or the environment, the paths and
** the files' names from pOpt. */
int wbPlanBuild(sqlite3_context *ctx, sqlite3_value *pTrace, JNode *pOpt,
                WbPlan *pl, int *pbDry);

/* The dry-run answer (tools-spec §7): what would be published, no
** request made.  0 when out of memory. */
JNode *wbPlanJson(const WbPlan *pl);

/* Publish plan pl (§6.1 P1–P7, run per §6.3).  Returns the result object
** or 0 (error in p). */
JNode *wbPublish(Wb *p, WbPlan *pl);

/* Free what a plan owns (safe on a zeroed plan). */
void wbPlanClear(WbPlan *pl);

#endif /* !PROFSUM_OMIT_NETWORK */
#endif /* PROFSUM_WANDB_INT_H */
