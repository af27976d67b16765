/*
** find_pick.c — the files of an artifact folder that profsum_import reads
** with the options "session" and "hosts" (docs/sessions.md): the
** session(s) chosen, in each one file by summary §1.1 (hosts 'one') or
** every host's best file (hosts 'all'), and the note on the files the pick
** left aside.  The walk itself and the table profsum_find_traces are in
** find.c; the C API is in find.h.
*/
#include "find_int.h"
#include "jsontree.h"

#include <stdlib.h>
#include <string.h>

/* The session of row r (its parent folder's name; "" when NULL) as a
** pointer and a length. */
static const char *findSessionOf(const ProfsumFindRow *r, int *pn){
  if( r->nSession<0 ){ *pn = 0; return ""; }
  *pn = r->nSession;
  return r->zPath + r->iSession;
}

/* 1 when rows a and b have the same session name. */
static int findSameSession(const ProfsumFindRow *a, const ProfsumFindRow *b){
  int na, nb;
  const char *za = findSessionOf(a, &na), *zb = findSessionOf(b, &nb);
  return na==nb && memcmp(za, zb, (size_t)na)==0;
}

/* Byte order of the session names of rows a and b: <0, 0, >0. */
static int findCmpSession(const ProfsumFindRow *a, const ProfsumFindRow *b){
  int na, nb, c;
  const char *za = findSessionOf(a, &na), *zb = findSessionOf(b, &nb);
  c = memcmp(za, zb, (size_t)(na<nb ? na : nb));
  return c ? c : na - nb;
}

/* 1 when rows a and b are files of one host in one folder (two formats of
** one capture). */
static int findSameHostFile(const ProfsumFindRow *a, const ProfsumFindRow *b){
  return a->eFormat!=FIND_FMT_PERFETTO && b->eFormat!=FIND_FMT_PERFETTO
      && profsumFindSameDir(a, b) && a->nHost==b->nHost
      && memcmp(a->zPath + a->iHost, b->zPath + b->iHost, (size_t)a->nHost)==0;
}

/* The rank of a format when one host has several files (hosts 'all'): the
** XPlane first (it holds the profile's start, for the alignment), then
** *.trace.json.gz, then *.trace.json.  Lower is better. */
static int findHostRank(int eFormat){
  return eFormat==FIND_FMT_XPLANE ? 0 : eFormat==FIND_FMT_TRACE_GZ ? 1 : 2;
}

/* Hosts 'one' in the rows of session pS: §1.1 over those rows alone (a
** lone XPlane that decodes, else the JSON pick), set in aSel.  SQLITE_OK
** or SQLITE_NOMEM. */
static int findPickOneIn(const ProfsumFindList *pList, const ProfsumFindRow *pS, char *aSel){
  sqlite3_int64 i, iJson = -1, iX = -1, nX = 0;
  for(i=0; i<pList->nRow; i++){
    const ProfsumFindRow *r = &pList->aRow[i];
    if( !findSameSession(r, pS) || !FIND_IS_READ(r->eFormat) ) continue;
    if( r->eFormat==FIND_FMT_XPLANE ){ nX++; iX = i; continue; }
    if( iJson<0 || r->eFormat<pList->aRow[iJson].eFormat ) iJson = i;
  }
  if( nX==1 ){
    int ok = profsumFindXPlaneDecodes(pList->aRow[iX].zPath);
    if( ok<0 ) return SQLITE_NOMEM;
    if( ok ) iJson = iX;
  }
  if( iJson>=0 ) aSel[iJson] = 1;
  return SQLITE_OK;
}

/* Hosts 'all' in the rows of session pS: for each host of each folder its
** best file (findHostRank; the first by path among equals); a session
** without host files: its first perfetto_trace.json.gz. */
static void findPickAllIn(const ProfsumFindList *pList, const ProfsumFindRow *pS, char *aSel){
  sqlite3_int64 i, j, iPerfetto = -1;
  int any = 0;
  for(i=0; i<pList->nRow; i++){
    const ProfsumFindRow *r = &pList->aRow[i];
    int keep = 1;
    if( !findSameSession(r, pS) || !FIND_IS_READ(r->eFormat) ) continue;
    if( r->eFormat==FIND_FMT_PERFETTO ){
      if( iPerfetto<0 ) iPerfetto = i;
      continue;
    }
    for(j=0; j<i && keep; j++){
      const ProfsumFindRow *q = &pList->aRow[j];
      if( aSel[j] && findSameHostFile(q, r) ){
        if( findHostRank(r->eFormat)<findHostRank(q->eFormat) ) aSel[j] = 0;
        else keep = 0;
      }
    }
    if( keep ){ aSel[i] = 1; any = 1; }
  }
  if( !any && iPerfetto>=0 ) aSel[iPerfetto] = 1;
}

/* The classes of a folder's rows in the note of a pick by options. */
#define FIND_NOTE_READ   1   /* read */
#define FIND_NOTE_FORM   2   /* not read, another form of a file read */
#define FIND_NOTE_ASIDE  3   /* left aside */

/* Append to pOut the rows of class eClass (aCls, by row index) among the
** rows a[0..n) of one folder (all of them): "the N files of '<folder>'"
** when they are all of that class and N > 1, else each path quoted; ", "
** before each item when *pnOut (items appended so far) is not 0. */
static void findNoteRun(sqlite3_str *pOut, const ProfsumFindList *pList, const ProfsumFindRow **a,
                        sqlite3_int64 n, const char *aCls, int eClass, sqlite3_int64 *pnOut){
  sqlite3_int64 k, nIn = 0;
  for(k=0; k<n; k++) nIn += aCls[a[k] - pList->aRow]==eClass;
  if( nIn==0 ) return;
  if( nIn==n && n>1 ){
    int nD = a[0]->nDir;
    sqlite3_str_appendf(pOut, "%sthe %lld trace files directly in '%.*s'", (*pnOut)++ ? ", " : "", n,
                        nD>0 ? nD : 1, nD>0 ? a[0]->zPath : "/");
    return;
  }
  for(k=0; k<n; k++){
    if( aCls[a[k] - pList->aRow]!=eClass ) continue;
    sqlite3_str_appendf(pOut, "%s'%s'", (*pnOut)++ ? ", " : "", a[k]->zPath);
  }
}

/* The note of a pick by options (zSession, hostsAll) that left trace files
** aside.  Each file the pick did not read is either another form of a
** file it read (another format of a host read from the same folder, or a
** perfetto_trace.json.gz beside a file read: JAX writes it as a copy of
** that folder's host trace) or left aside; the note counts the three
** kinds, which add up to the folder's files, and names every file of the
** last two (all the files of a folder as that folder).  0 when nothing was
** left aside (*pOom set when the note could not be made). */
static char *findOptionNote(const ProfsumFindList *pList, const char *aSel,
                            const char *zSession, int hostsAll, int *pOom){
  sqlite3_int64 i, j, n = pList->nRow, nSel = 0, nForm = 0, nAside = 0, nOutA = 0, nOutF = 0;
  const ProfsumFindRow **a = 0;
  sqlite3_str *pA = 0, *pF = 0;
  char *aCls, *zA = 0, *zF = 0, *z = 0;
  *pOom = 0;
  aCls = profsumMallocZero((sqlite3_uint64)n + 1);
  if( aCls==0 ){ *pOom = 1; return 0; }
  for(i=0; i<n; i++){
    const ProfsumFindRow *r = &pList->aRow[i];
    int form = 0;
    if( aSel[i] ){ aCls[i] = FIND_NOTE_READ; nSel++; continue; }
    for(j=0; j<n && !form; j++){
      form = aSel[j] && (findSameHostFile(&pList->aRow[j], r)
                         || (r->eFormat==FIND_FMT_PERFETTO && profsumFindSameDir(&pList->aRow[j], r)));
    }
    aCls[i] = form ? FIND_NOTE_FORM : FIND_NOTE_ASIDE;
    if( form ) nForm++; else nAside++;
  }
  if( nAside==0 ){ sqlite3_free(aCls); return 0; }
  a = sqlite3_malloc64(sizeof(*a)*(sqlite3_uint64)n);
  pA = sqlite3_str_new(0);
  pF = sqlite3_str_new(0);
  if( a ){
    for(i=0; i<n; i++) a[i] = &pList->aRow[i];
    qsort(a, (size_t)n, sizeof(*a), profsumFindCmpDir);
    for(i=0; i<n; i=j){
      for(j=i+1; j<n && profsumFindSameDir(a[i], a[j]); j++){}
      findNoteRun(pA, pList, a+i, j-i, aCls, FIND_NOTE_ASIDE, &nOutA);
      findNoteRun(pF, pList, a+i, j-i, aCls, FIND_NOTE_FORM, &nOutF);
    }
  }
  if( a==0 || sqlite3_str_errcode(pA) || sqlite3_str_errcode(pF) ) *pOom = 1;
  zA = sqlite3_str_finish(pA);     /* NULL when empty */
  zF = sqlite3_str_finish(pF);
  if( !*pOom ){
    sqlite3_str *pOut = sqlite3_str_new(0);
    sqlite3_str_appendf(pOut, "With session '%s' and hosts '%s', profsum read %lld of the %lld trace files "
        "of this folder and left %lld aside: %s", zSession ? zSession : "reference",
        hostsAll ? "all" : "one", nSel, n, nAside, zA ? zA : "");
    if( nForm>0 ){
      sqlite3_str_appendf(pOut, "; %lld more %s what it read in another form (another format of a host "
          "it read, or the perfetto_trace.json.gz JAX copies from the host trace beside it): %s", nForm,
          nForm==1 ? "holds" : "hold", zF ? zF : "");
    }
    sqlite3_str_appendf(pOut, ". See profsum_find_traces(dir, options) for the pick.");
    z = sqlite3_str_finish(pOut);
  }
  sqlite3_free(zA);
  sqlite3_free(zF);
  sqlite3_free(a);
  sqlite3_free(aCls);
  if( z==0 && !*pOom ) *pOom = 1;
  return z;
}

/* Mark in aSel (pList->nRow bytes, zeroed) the rows an import with the
** options zSession (0: the reference's) and hostsAll reads.  SQLITE_OK
** (nothing marked when nothing is found), SQLITE_ERROR with *pzErr (no
** such session: the message lists those found) or SQLITE_NOMEM. */
int profsumFindSelect(const ProfsumFindList *pList, const char *zDir, const char *zSession,
                      int hostsAll, char *aSel, const ProfsumFindRow **ppS, char **pzErr){
  sqlite3_int64 i;
  const ProfsumFindRow *pS = 0;
  int rc = SQLITE_OK;
  *pzErr = 0;
  if( zSession==0 ){
    /* the reference's session; with hosts 'all' and no pick (several
    ** XPlanes, no JSON), the first session in path order that
    ** has a file profsum reads */
    if( !hostsAll ){
      if( pList->iPicked>=0 ) aSel[pList->iPicked] = 1;
      return SQLITE_OK;
    }
    if( pList->iPicked>=0 ){
      findPickAllIn(pList, &pList->aRow[pList->iPicked], aSel);
      return SQLITE_OK;
    }
    for(i=0; i<pList->nRow; i++){
      /* a folder of .xplane.riegeli files alone has none */
      if( FIND_IS_READ(pList->aRow[i].eFormat) ){ findPickAllIn(pList, &pList->aRow[i], aSel); break; }
    }
    return SQLITE_OK;
  }
  if( strcmp(zSession, "all")==0 ){
    for(i=0; rc==SQLITE_OK && i<pList->nRow; i++){
      sqlite3_int64 j;
      int seen = 0;
      for(j=0; j<i && !seen; j++) seen = findSameSession(&pList->aRow[j], &pList->aRow[i]);
      if( seen ) continue;
      if( hostsAll ) findPickAllIn(pList, &pList->aRow[i], aSel);
      else rc = findPickOneIn(pList, &pList->aRow[i], aSel);
    }
    return rc;
  }
  for(i=0; i<pList->nRow; i++){
    const ProfsumFindRow *r = &pList->aRow[i];
    if( strcmp(zSession, "latest")==0 ){
      /* the latest session that has a file profsum reads (a folder of
      ** .xplane.riegeli files alone has none) */
      if( FIND_IS_READ(r->eFormat) && (pS==0 || findCmpSession(r, pS)>0) ) pS = r;
    }else{
      int n;
      const char *z = findSessionOf(r, &n);
      if( (int)strlen(zSession)==n && memcmp(z, zSession, (size_t)n)==0 ){ pS = r; break; }
    }
  }
  if( pS==0 ){
    sqlite3_str *pOut;
    if( pList->nRow==0 || strcmp(zSession, "latest")==0 ) return SQLITE_OK;
    pOut = sqlite3_str_new(0);
    sqlite3_str_appendf(pOut, "'%q': no session '%q' (the sessions found:", zDir, zSession);
    for(i=0; i<pList->nRow; i++){
      sqlite3_int64 j;
      int n, seen = 0;
      const char *z = findSessionOf(&pList->aRow[i], &n);
      for(j=0; j<i && !seen; j++) seen = findSameSession(&pList->aRow[j], &pList->aRow[i]);
      if( !seen ) sqlite3_str_appendf(pOut, " '%.*q'", n, z);
    }
    sqlite3_str_appendf(pOut, ")");
    *pzErr = sqlite3_str_finish(pOut);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( ppS ) *ppS = pS;
  if( hostsAll ){ findPickAllIn(pList, pS, aSel); return SQLITE_OK; }
  return findPickOneIn(pList, pS, aSel);
}

/* The error of hosts 'one' in session pS (chosen by zSession: 'latest' or
** its name) when §1.1 finds nothing to read in it: several hosts' XPlanes
** and no trace JSON, or a lone XPlane that does not decode.  0 (then the
** caller's generic message) for a session of *.xplane.riegeli files alone;
** *pOom set when the message cannot be made.  No older session is read in
** its place: another capture than the one asked for. */
static char *findOneInError(const ProfsumFindList *pList, const char *zDir, const char *zSession,
                            const ProfsumFindRow *pS, int *pOom){
  sqlite3_int64 i, nX = 0;
  int n;
  const char *zS = findSessionOf(pS, &n);
  const char *zWhich = strcmp(zSession, "latest")==0 ? " (the latest)" : "";
  char *z;
  *pOom = 0;
  for(i=0; i<pList->nRow; i++){
    if( pList->aRow[i].eFormat==FIND_FMT_XPLANE && findSameSession(&pList->aRow[i], pS) ) nX++;
  }
  if( nX>1 ){
    z = sqlite3_mprintf("'%q': session '%.*q'%s holds %lld *.xplane.pb files, one per host, and no "
        "trace JSON, and with hosts 'one' an XPlane is read only when it is the session's only one "
        "(summary §1.1): read its hosts with hosts 'all' (CLI: --all-hosts), give one of its files, "
        "or name another session", zDir, n, zS, zWhich, nX);
  }else if( nX==1 ){
    z = sqlite3_mprintf("'%q': session '%.*q'%s holds one *.xplane.pb, which does not decode as an "
        "XSpace protobuf, and no trace JSON: nothing to read with hosts 'one' (give the file itself "
        "to see where it fails, or name another session)", zDir, n, zS, zWhich);
  }else{
    return 0;
  }
  if( z==0 ) *pOom = 1;
  return z;
}

/* See find.h. */
int profsumPickSession(const char *zDir, const char *zSession, int hostsAll,
                       ProfsumPickSet *pSet, char **pzErr){
  ProfsumFindList list;
  const ProfsumFindRow *pS = 0;
  char *zErr = 0, *aSel = 0;
  sqlite3_int64 i;
  int rc, k = 0, bOom = 0;
  memset(pSet, 0, sizeof(*pSet));
  *pzErr = 0;
  if( zSession==0 && !hostsAll ){
    /* the reference's pick, as profsumPickTraceNote makes it */
    char *zPath = 0;
    rc = profsumPickTraceNote(zDir, &zPath, 0, &pSet->zNote, 0, pzErr);
    if( rc ) return rc;
    pSet->a = profsumMallocZero(sizeof(ProfsumPickFile));
    if( pSet->a==0 ){ sqlite3_free(zPath); profsumPickSetFree(pSet); return SQLITE_NOMEM; }
    pSet->a[0].zPath = zPath;
    pSet->n = 1;
    return SQLITE_OK;
  }
  memset(&list, 0, sizeof(list));
  rc = profsumFindCollect(zDir, &list, &zErr);
  if( rc==SQLITE_OK ){
    aSel = profsumMallocZero((sqlite3_uint64)list.nRow + 1);
    if( aSel==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) rc = profsumFindSelect(&list, zDir, zSession, hostsAll, aSel, &pS, &zErr);
  for(i=0; rc==SQLITE_OK && i<list.nRow; i++) k += aSel[i]!=0;
  if( rc==SQLITE_OK && k==0 && pS && !hostsAll ){
    zErr = findOneInError(&list, zDir, zSession, pS, &bOom);
    if( bOom ) rc = SQLITE_NOMEM;
    else if( zErr ) rc = SQLITE_NOTFOUND;
  }
  if( rc==SQLITE_OK && k==0 ){
    /* found files that the session and hosts did not select: say so */
    int64_t nX = 0;
    for(i=0; i<list.nRow; i++) nX += list.aRow[i].eFormat==FIND_FMT_XPLANE;
    zErr = sqlite3_mprintf("'%q': no trace file %s for session '%s' and hosts '%s' (expected "
        "perfetto_trace.json.gz, *.trace.json.gz, *.trace.json or *.xplane.pb%s)%s", zDir,
        list.nRow>0 ? "selected" : "found",
        zSession ? zSession : "reference", hostsAll ? "all" : "one",
        hostsAll ? "" : (nX>1 ? "; the folder holds several *.xplane.pb: a session of several "
                                "and no JSON trace is read with hosts 'all' (CLI: --all-hosts)"
                              : "; a session of several *.xplane.pb and no JSON trace is read with hosts 'all'"),
        profsumFindRiegeliHint(&list));
    rc = zErr ? SQLITE_NOTFOUND : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    pSet->a = profsumMallocZero(sizeof(ProfsumPickFile)*(sqlite3_uint64)k);
    if( pSet->a==0 ) rc = SQLITE_NOMEM;
  }
  for(i=0; rc==SQLITE_OK && i<list.nRow; i++){
    const ProfsumFindRow *r = &list.aRow[i];
    ProfsumPickFile *f;
    int n;
    const char *zS;
    if( !aSel[i] ) continue;
    f = &pSet->a[pSet->n++];
    zS = findSessionOf(r, &n);
    f->zPath = sqlite3_mprintf("%s", r->zPath);
    f->zSession = sqlite3_mprintf("%.*s", n, zS);
    f->zHost = r->eFormat==FIND_FMT_PERFETTO ? 0 : sqlite3_mprintf("%.*s", r->nHost, r->zPath + r->iHost);
    if( !f->zPath || !f->zSession || (r->eFormat!=FIND_FMT_PERFETTO && !f->zHost) ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK && r->eFormat==FIND_FMT_XPLANE ){
      /* the host's trace JSON beside it, for an XPlane that does not decode */
      sqlite3_int64 j, iAlt = -1;
      for(j=0; j<list.nRow; j++){
        const ProfsumFindRow *q = &list.aRow[j];
        if( j==i || !FIND_IS_JSON(q->eFormat) || !findSameHostFile(q, r) ) continue;
        if( iAlt<0 || findHostRank(q->eFormat)<findHostRank(list.aRow[iAlt].eFormat) ) iAlt = j;
      }
      if( iAlt>=0 && (f->zAlt = sqlite3_mprintf("%s", list.aRow[iAlt].zPath))==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK ){
    pSet->zNote = findOptionNote(&list, aSel, zSession, hostsAll, &bOom);
    if( bOom ) rc = SQLITE_NOMEM;
  }
  sqlite3_free(aSel);
  profsumFindListReset(&list);
  if( rc ){
    profsumPickSetFree(pSet);
    if( rc==SQLITE_NOMEM ){ sqlite3_free(zErr); zErr = 0; }
  }
  *pzErr = zErr;
  return rc;
}

/* See find.h. */
void profsumPickSetFree(ProfsumPickSet *pSet){
  int i;
  for(i=0; i<pSet->n; i++){
    sqlite3_free(pSet->a[i].zPath);
    sqlite3_free(pSet->a[i].zHost);
    sqlite3_free(pSet->a[i].zSession);
    sqlite3_free(pSet->a[i].zAlt);
  }
  sqlite3_free(pSet->a);
  sqlite3_free(pSet->zNote);
  memset(pSet, 0, sizeof(*pSet));
}

/* See find.h. */
int profsumPickOptions(const char *zJson, char **pzSession, int *pHostsAll, char **pzErr){
  JNode *p, *s, *h;
  int rc = SQLITE_OK;
  *pzSession = 0;
  *pHostsAll = 0;
  *pzErr = 0;
  if( zJson==0 ) return SQLITE_OK;
  p = jParseOptions(zJson, -1, &rc, pzErr);
  if( p==0 ) return rc;
  s = jGet(p, "session");
  h = jGet(p, "hosts");
  if( s && !(s->type==JT_STRING && s->n>0) ){
    /* the value as written (compact JSON), as profsum_import quotes it */
    char *zV = profsumJsonCompact(s);
    *pzErr = zV ? sqlite3_mprintf("options_json: 'session' must be 'reference', 'latest', 'all' "
                                  "or a session folder name, not %s", zV) : 0;
    sqlite3_free(zV);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }else if( h && !(h->type==JT_STRING && (strcmp(h->z, "one")==0 || strcmp(h->z, "all")==0)) ){
    char *zV = profsumJsonCompact(h);
    *pzErr = zV ? sqlite3_mprintf("options_json: 'hosts' must be 'one' or 'all', not %s", zV) : 0;
    sqlite3_free(zV);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }else{
    if( s && strcmp(s->z, "reference")!=0 ){
      *pzSession = sqlite3_mprintf("%s", s->z);
      if( *pzSession==0 ) rc = SQLITE_NOMEM;
    }
    *pHostsAll = h && strcmp(h->z, "all")==0;
  }
  jFree(p);
  return rc;
}

