/*
** find.c — profsum_find_traces(): list the trace files of an artifact folder.
**
** Usage:
**
**   SELECT path, format, picked, reference_pick
**     FROM profsum_find_traces('/data/jax_profile-v3');
**
** Schema of the eponymous-only table-valued function (hidden input last):
**
**   CREATE TABLE profsum_find_traces(
**     path            TEXT,     -- dir + '/' + path relative to dir
**     host            TEXT,     -- <host> of <host>.trace.json[.gz] / <host>.xplane.pb;
**                               -- NULL for perfetto_trace.json.gz
**     session         TEXT,     -- name of the parent directory (the <session> of
**                               -- .../plugins/profile/<session>/<file>)
**     size            INTEGER,  -- file size in bytes
**     format          TEXT,     -- 'perfetto_trace_json_gz' | 'trace_json_gz' |
**                               -- 'trace_json' | 'xplane_pb' | 'xplane_riegeli'
**     picked          INTEGER,  -- 1 on the file profsum reads, else 0
**     reference_pick  INTEGER,  -- 1 on the file the reference tool reads, else 0
**     dir             HIDDEN    -- input: the directory to search (required)
**     options         HIDDEN    -- input: import options (optional): "session"
**                               -- and "hosts" set picked (find.h)
**   );
**
** Candidates (summary-v1-spec.md §1.1; file names are matched case-sensitively,
** '*' also matches an empty prefix and names starting with '.'):
**   perfetto_trace.json.gz, *.trace.json.gz, *.trace.json, *.xplane.pb.
** An uncompressed perfetto_trace.json matches none of these and is not listed.
** A *.xplane.riegeli (XSpace chunks in Riegeli records, the profiler's newer
** way of saving) is listed too, so that a user sees it, but never picked:
** profsum does not read that format yet, and the reference ignores it.
**
** Walk.  dir is searched recursively with opendir/readdir (lstat when
** readdir gives no type).  Symbolic links to directories are not followed
** (no loops; this is also what pathlib's rglob does).  A symbolic link to a
** regular file with a candidate name is listed with the size of its target;
** directories, FIFOs, sockets and dangling links with candidate names are not
** (they are kept aside as "ghosts": the reference counts them).
** Subdirectories that cannot be opened are skipped silently.  The walk is
** bounded: more than PROFSUM_FIND_MAX_DEPTH levels of nesting or more than
** PROFSUM_FIND_MAX_ENTRIES directory entries in total is an error (a bound on
** time and memory, and a guard against bind-mount loops).
**
** Order.  Rows come sorted by path the way the reference tool sorts
** pathlib.Path objects: component by component, each component compared
** byte-wise (code point order for UTF-8 names).  This is plain byte order
** except that the '/' separator sorts before every other byte, so
** "run/x.trace.json" comes before "run-2/x.trace.json".  Because this is
** not SQLite's BINARY collation of the path text, the function does not
** claim to satisfy ORDER BY path (SQLite sorts again when asked).
**
** picked / reference_pick (§1.1):
**   picked          the file profsum reads.  XPlane first: exactly one
**                   *.xplane.pb file that decodes as an XSpace protobuf (the
**                   whole file is walked, strings strict UTF-8) → that file;
**                   zero or several, or a lone one that does not decode →
**                   the JSON pick (step 4): the first perfetto_trace.json.gz
**                   in path order, else the first *.trace.json.gz, else the
**                   first *.trace.json.  With options, every file an import
**                   with those options reads (profsumPickSession).
**   reference_pick  the file the reference reads: the same rule, but its
**                   search matches names alone, so it also counts the
**                   entries with a candidate name that are not files (a
**                   directory, a dangling link, a FIFO: ghosts).  A ghost
**                   among the *.xplane.pb makes several, or is the lone one
**                   (it fails reading it; a dangling link: it turns to the
**                   JSON step); a ghost first among the JSON names is the
**                   JSON pick, which it fails to read.  No row when it
**                   fails or finds nothing (profsumFindRefPick).  At most
**                   one row.
**
** path, session.  path is the argument with trailing '/' removed (except
** for "/" itself), then '/', then the path relative to it; no other
** normalisation (so dir "." gives "./a/b.trace.json").  session is the last
** component of the parent directory of path: for the artifact layout
** .../plugins/profile/<session>/<file> this is <session>; for any other
** layout it is simply the parent directory's name.  It is NULL when that
** component is empty (a file directly under "/") or ".".
**
** Errors (SQL errors; text starts with "profsum_find_traces: " and quotes
** dir as given):
**   '<dir>': no such directory
**   '<dir>': not a directory
**   '<dir>': cannot open directory (<strerror>)     e.g. Permission denied
**   '<dir>': cannot access directory (<strerror>)   other stat failures
**   '<dir>': path contains a NUL byte
**   '<dir>': more than 1000000 directory entries; point at a smaller folder
**   '<dir>': directories nested deeper than 64 levels at '<path>'
**   missing required argument DIR                   no dir constraint at all
** A NULL dir gives zero rows.
**
** Security: the function reads the file system, so it is DIRECTONLY (see
** profsumFindConnect) and never INNOCUOUS.
**
** C helper: profsumPickTrace() in find.h applies the same walk and picks
** for the import code.
*/
#include "profsum_int.h"
#include "find_int.h"
#include "xplane_pb.h"
#include "jsontree.h"
#include "vtabkit.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Bounds of the walk (overridable at compile time, e.g. for tests). */
#ifndef PROFSUM_FIND_MAX_DEPTH
# define PROFSUM_FIND_MAX_DEPTH    64       /* levels below dir */
#endif
#ifndef PROFSUM_FIND_MAX_ENTRIES
# define PROFSUM_FIND_MAX_ENTRIES  1000000  /* directory entries examined */
#endif

static const char *const azProfsumFindFormat[] = {
  "perfetto_trace_json_gz", "trace_json_gz", "trace_json", "xplane_pb", "xplane_riegeli"
};

/* State of a walk in progress. */
typedef struct ProfsumFindWalk ProfsumFindWalk;
struct ProfsumFindWalk {
  ProfsumFindList *pList; /* Receives the candidates */
  const char *zDir;       /* The directory as given, for messages only */
  char *zBuf;             /* Path of the current entry, sqlite3_realloc64'd */
  size_t nBuf;            /* strlen(zBuf) */
  size_t nBufAlloc;       /* Bytes allocated for zBuf */
  sqlite3_int64 nEntry;   /* Directory entries examined so far */
  char *zErr;             /* Error message (no function prefix), owned */
};

/*
** Release everything a list owns and leave it empty (picks = none).
** Safe on a zeroed or already reset list.
*/
void profsumFindListReset(ProfsumFindList *pList){
  sqlite3_int64 i;
  for(i=0; i<pList->nRow; i++) sqlite3_free(pList->aRow[i].zPath);
  for(i=0; i<pList->nGhost; i++) sqlite3_free(pList->aGhost[i].zPath);
  sqlite3_free(pList->aRow);
  sqlite3_free(pList->aGhost);
  memset(pList, 0, sizeof(*pList));
  pList->iPicked = -1;
  pList->iRefPick = -1;
  pList->iRefGhost = -1;
}

/* Return 1 if zName ends with zSuffix (nName = strlen(zName)). */
static int profsumFindEndsWith(const char *zName, size_t nName,
                               const char *zSuffix){
  size_t n = strlen(zSuffix);
  return nName>=n && memcmp(zName+nName-n, zSuffix, n)==0;
}

/*
** Classify a file name.  Returns FIND_FMT_* and sets *pnSuffix to the
** length of the matched suffix (the host is the rest), or returns -1 when
** the name is not a candidate.
*/
static int profsumFindFormatOf(const char *zName, size_t *pnSuffix){
  size_t n = strlen(zName);
  if( strcmp(zName, "perfetto_trace.json.gz")==0 ){
    *pnSuffix = n;
    return FIND_FMT_PERFETTO;
  }
  if( profsumFindEndsWith(zName, n, ".trace.json.gz") ){
    *pnSuffix = 14;
    return FIND_FMT_TRACE_GZ;
  }
  if( profsumFindEndsWith(zName, n, ".trace.json") ){
    *pnSuffix = 11;
    return FIND_FMT_TRACE;
  }
  if( profsumFindEndsWith(zName, n, ".xplane.pb") ){
    *pnSuffix = 10;
    return FIND_FMT_XPLANE;
  }
  if( profsumFindEndsWith(zName, n, ".xplane.riegeli") ){
    *pnSuffix = 15;
    return FIND_FMT_RIEGELI;
  }
  return -1;
}

/*
** Compare two paths the way Python compares pathlib.PurePosixPath objects
** (lists of components): bytes compare unsigned, but '/' ranks below every
** other byte and end-of-string below '/'.  Returns <0, 0, >0.
*/
static int profsumFindPathCmp(const char *zA, const char *zB){
  const unsigned char *a = (const unsigned char*)zA;
  const unsigned char *b = (const unsigned char*)zB;
  int ra, rb;
  while( *a && *a==*b ){ a++; b++; }
  ra = *a==0 ? 0 : *a=='/' ? 1 : (int)*a + 1;
  rb = *b==0 ? 0 : *b=='/' ? 1 : (int)*b + 1;
  return ra - rb;
}

/* qsort() callback over ProfsumFindRow. */
static int profsumFindRowCmp(const void *pA, const void *pB){
  return profsumFindPathCmp(((const ProfsumFindRow*)pA)->zPath,
                            ((const ProfsumFindRow*)pB)->zPath);
}

/*
** Append the current path (p->zBuf) as a candidate of format eFormat and
** size iSize; nSuffix is the length of the matched name suffix.
** Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int profsumFindAddRow(ProfsumFindWalk *p, int eFormat, size_t nSuffix,
                             sqlite3_int64 iSize){
  ProfsumFindList *pList = p->pList;
  ProfsumFindRow *pRow;
  const char *z = p->zBuf;
  int n = (int)p->nBuf;
  int iName, iEnd, iStart;

  if( pList->nRow>=pList->nAlloc ){
    sqlite3_int64 nNew = pList->nAlloc ? pList->nAlloc*2 : 16;
    ProfsumFindRow *aNew = sqlite3_realloc64(pList->aRow,
                                             nNew*sizeof(ProfsumFindRow));
    if( aNew==0 ) return SQLITE_NOMEM;
    pList->aRow = aNew;
    pList->nAlloc = nNew;
  }
  pRow = &pList->aRow[pList->nRow];
  memset(pRow, 0, sizeof(*pRow));
  pRow->zPath = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( pRow->zPath==0 ) return SQLITE_NOMEM;
  memcpy(pRow->zPath, z, (size_t)n + 1);
  pRow->nPath = n;
  pRow->iSize = iSize;
  pRow->eFormat = eFormat;
  pList->nRow++;
  if( eFormat==FIND_FMT_XPLANE ) pList->nXplane++;
  if( eFormat==FIND_FMT_RIEGELI ) pList->nRiegeli++;

  /* The walk always builds dir + '/' + name, so a '/' precedes the name. */
  for(iName=n; iName>0 && z[iName-1]!='/'; iName--){}
  assert( iName>0 );
  if( eFormat==FIND_FMT_PERFETTO ){
    pRow->nHost = -1;
  }else{
    pRow->iHost = iName;
    pRow->nHost = n - iName - (int)nSuffix;
  }
  iEnd = iName - 1;                       /* the '/' before the name */
  pRow->nDir = iEnd;
  for(iStart=iEnd; iStart>0 && z[iStart-1]!='/'; iStart--){}
  pRow->iSession = iStart;
  pRow->nSession = iEnd - iStart;
  if( pRow->nSession==0 || (pRow->nSession==1 && z[iStart]=='.') ){
    pRow->nSession = -1;
  }
  return SQLITE_OK;
}

/*
** Record the current path (p->zBuf), an entry of kind eKind
** (FIND_GHOST_*) whose name has format eFormat, as a ghost: not listed,
** but counted by the reference (ProfsumFindGhost).  *.xplane.riegeli
** names are not recorded (the reference looks for none).
** Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int profsumFindAddGhost(ProfsumFindWalk *p, int eFormat, int eKind){
  ProfsumFindList *pList = p->pList;
  ProfsumFindGhost *g;
  if( !FIND_IS_READ(eFormat) ) return SQLITE_OK;
  if( pList->nGhost>=pList->nGhostAlloc ){
    sqlite3_int64 nNew = pList->nGhostAlloc ? pList->nGhostAlloc*2 : 4;
    ProfsumFindGhost *aNew = sqlite3_realloc64(pList->aGhost, nNew*sizeof(ProfsumFindGhost));
    if( aNew==0 ) return SQLITE_NOMEM;
    pList->aGhost = aNew;
    pList->nGhostAlloc = nNew;
  }
  g = &pList->aGhost[pList->nGhost];
  g->zPath = sqlite3_malloc64((sqlite3_uint64)p->nBuf + 1);
  if( g->zPath==0 ) return SQLITE_NOMEM;
  memcpy(g->zPath, p->zBuf, p->nBuf + 1);
  g->eFormat = eFormat;
  g->eKind = eKind;
  pList->nGhost++;
  if( eFormat==FIND_FMT_XPLANE ) pList->nGhostX++;
  return SQLITE_OK;
}

/*
** Make p->zBuf = <first nBase bytes of zBuf> + '/' + zName (no '/' added
** when the base already ends with one, i.e. the root "/").
** Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int profsumFindPush(ProfsumFindWalk *p, size_t nBase, const char *zName){
  size_t nName = strlen(zName);
  size_t nNeed = nBase + 1 + nName + 1;
  int bSep = nBase>0 && p->zBuf[nBase-1]!='/';
  if( nNeed>p->nBufAlloc ){
    size_t nNew = p->nBufAlloc*2 > nNeed ? p->nBufAlloc*2 : nNeed + 256;
    char *zNew = sqlite3_realloc64(p->zBuf, nNew);
    if( zNew==0 ) return SQLITE_NOMEM;
    p->zBuf = zNew;
    p->nBufAlloc = nNew;
  }
  p->nBuf = nBase;
  if( bSep ) p->zBuf[p->nBuf++] = '/';
  memcpy(p->zBuf + p->nBuf, zName, nName + 1);
  p->nBuf += nName;
  return SQLITE_OK;
}

/* Set p->zErr from a format; returns SQLITE_ERROR, or SQLITE_NOMEM. */
static int profsumFindWalkErr(ProfsumFindWalk *p, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(p->zErr);
  va_start(ap, zFmt);
  p->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return p->zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Kinds of directory entries, as far as the walk cares. */
#define PROFSUM_ENT_UNKNOWN 0   /* readdir gave no type: lstat decides */
#define PROFSUM_ENT_DIR     1
#define PROFSUM_ENT_REG     2
#define PROFSUM_ENT_LNK     3
#define PROFSUM_ENT_OTHER   4   /* FIFO, socket, device: never a candidate */

/*
** List the candidates in directory p->zBuf (at nesting level iDepth, 0 for
** the argument itself) and below.  A subdirectory that cannot be opened is
** skipped; the top directory failing to open is an error.  A readdir()
** failure ends the listing of that directory with what was read.
** Returns SQLITE_OK, SQLITE_ERROR (p->zErr set) or SQLITE_NOMEM.
*/
static int profsumFindWalkDir(ProfsumFindWalk *p, int iDepth){
  size_t nBase = p->nBuf;
  int rc = SQLITE_OK;
  struct dirent *pEnt;
  DIR *pDir = opendir(p->zBuf);

  if( pDir==0 ){
    int e = errno;
    if( iDepth>0 ) return SQLITE_OK;
    return profsumFindWalkErr(p, "'%q': cannot open directory (%s)",
                              p->zDir, strerror(e));
  }
  while( rc==SQLITE_OK && (pEnt = readdir(pDir))!=0 ){
    const char *zName = pEnt->d_name;
    size_t nSuffix = 0;
    int eFormat, eKind = PROFSUM_ENT_UNKNOWN;
    struct stat st;

    if( zName[0]=='.' && (zName[1]==0 || (zName[1]=='.' && zName[2]==0)) ){
      continue;
    }
    if( ++p->nEntry > PROFSUM_FIND_MAX_ENTRIES ){
      rc = profsumFindWalkErr(p,
             "'%q': more than %d directory entries; point at a smaller folder",
             p->zDir, PROFSUM_FIND_MAX_ENTRIES);
      break;
    }
    eFormat = profsumFindFormatOf(zName, &nSuffix);
#ifdef DT_UNKNOWN
    switch( pEnt->d_type ){
      case DT_DIR:     eKind = PROFSUM_ENT_DIR;     break;
      case DT_REG:     eKind = PROFSUM_ENT_REG;     break;
      case DT_LNK:     eKind = PROFSUM_ENT_LNK;     break;
      case DT_UNKNOWN: eKind = PROFSUM_ENT_UNKNOWN; break;
      default:         eKind = PROFSUM_ENT_OTHER;   break;
    }
#endif
    /* Fast path: a non-directory that is not a candidate needs no stat. */
    if( eFormat<0 && eKind!=PROFSUM_ENT_DIR && eKind!=PROFSUM_ENT_UNKNOWN ) continue;
    rc = profsumFindPush(p, nBase, zName);
    if( rc!=SQLITE_OK ) break;
    if( eKind==PROFSUM_ENT_UNKNOWN ){
      if( lstat(p->zBuf, &st)!=0 ) continue;   /* vanished meanwhile */
      if( S_ISDIR(st.st_mode) )      eKind = PROFSUM_ENT_DIR;
      else if( S_ISREG(st.st_mode) ) eKind = PROFSUM_ENT_REG;
      else if( S_ISLNK(st.st_mode) ) eKind = PROFSUM_ENT_LNK;
      else eKind = PROFSUM_ENT_OTHER;
    }
    if( eKind==PROFSUM_ENT_OTHER ){
      /* a FIFO, socket or device with a candidate's name */
      if( eFormat>=0 ) rc = profsumFindAddGhost(p, eFormat, FIND_GHOST_OTHER);
    }else if( eKind==PROFSUM_ENT_DIR ){
      /* lstat/d_type say DIR only for real directories: symbolic links to
      ** directories are never entered, so link cycles cannot loop.  One
      ** with a candidate's name is a ghost, and is walked too. */
      if( eFormat>=0 ) rc = profsumFindAddGhost(p, eFormat, FIND_GHOST_DIR);
      if( rc!=SQLITE_OK ) break;
      if( iDepth+1 > PROFSUM_FIND_MAX_DEPTH ){
        rc = profsumFindWalkErr(p,
               "'%q': directories nested deeper than %d levels at '%q'",
               p->zDir, PROFSUM_FIND_MAX_DEPTH, p->zBuf);
      }else{
        rc = profsumFindWalkDir(p, iDepth+1);
      }
    }else if( eFormat>=0 ){
      /* A regular file, or a link that must resolve to one (else a ghost:
      ** a link to a directory or another non-file, or one that resolves
      ** to nothing). */
      if( stat(p->zBuf, &st)!=0 ){
        rc = profsumFindAddGhost(p, eFormat, FIND_GHOST_DANGLING);
      }else if( S_ISREG(st.st_mode) ){
        rc = profsumFindAddRow(p, eFormat, nSuffix, (sqlite3_int64)st.st_size);
      }else{
        rc = profsumFindAddGhost(p, eFormat, S_ISDIR(st.st_mode) ? FIND_GHOST_DIR : FIND_GHOST_OTHER);
      }
    }
  }
  closedir(pDir);
  if( p->zBuf ) p->zBuf[nBase] = 0;
  p->nBuf = nBase;
  return rc;
}

/* 1 when the XSpace file zPath decodes as the reference's protobuf parser
** decodes it (every field walked, strings strict UTF-8), 0 on a decode
** error (§1.1 step 2: the JSON trace is read instead), -1 when out of
** memory.  Another failure (the file cannot be read) counts as decoding:
** the XPlane stays the pick, and reading it reports the failure.  A gzip
** file does not decode: the reference parses the bytes as they are (its
** first byte, 0x1F, is a tag of wire type 7), where profsum's reader would
** inflate them. */
int profsumFindXPlaneDecodes(const char *zPath){
  ProfsumXp *p = 0;
  const ProfsumXpPlane *pl;
  const ProfsumXpLine *ln;
  const ProfsumXpEvent *ev;
  char *zErr = 0;
  int rc;
  FILE *f = fopen(zPath, "rb");
  if( f ){
    unsigned char a[2];
    int isGzip = fread(a, 1, 2, f)==2 && a[0]==0x1f && a[1]==0x8b;
    fclose(f);
    if( isGzip ) return 0;
  }
  rc = profsumXpOpen("profsum_find_traces", zPath, 0, 0, 0, &p, &zErr);
  while( rc==SQLITE_OK && (rc = profsumXpNextPlane(p, &pl, &zErr))==SQLITE_ROW ){
    while( (rc = profsumXpNextLine(p, &ln, &zErr))==SQLITE_ROW ){
      while( (rc = profsumXpNextEvent(p, &ev, &zErr))==SQLITE_ROW ){}
      if( rc!=SQLITE_DONE ) break;
    }
    if( rc!=SQLITE_DONE ) break;
    rc = SQLITE_OK;
  }
  profsumXpClose(p);
  sqlite3_free(zErr);
  if( rc==SQLITE_NOMEM ) return -1;
  return rc==PROFSUM_RC_DAMAGED ? 0 : 1;
}

/* qsort() callback over ProfsumFindGhost: path order. */
static int profsumFindGhostCmp(const void *pA, const void *pB){
  return profsumFindPathCmp(((const ProfsumFindGhost*)pA)->zPath,
                            ((const ProfsumFindGhost*)pB)->zPath);
}

/*
** The reference's pick (summary §1.1) in pList->iRefPick, its way there in
** pList->eRefWay and pList->iRefGhost.  The reference's search matches
** names alone: it counts the ghosts (entries with a candidate's name that
** are not files) with the files, and fails reading one, except a lone
** dangling link named *.xplane.pb (its check that the XPlane exists sends
** it to the JSON step).  iJson: the JSON pick among the files (-1: none);
** iX: the lone *.xplane.pb file (-1: none), pList->bXplaneBad set when it
** does not decode.  Needs the rows and ghosts sorted.
*/
static void profsumFindRefPick(ProfsumFindList *pList, sqlite3_int64 iJson, sqlite3_int64 iX){
  sqlite3_int64 i, iG = -1, nX = pList->nXplane + pList->nGhostX;
  pList->iRefPick = -1;
  pList->iRefGhost = -1;
  if( nX==1 && iX>=0 && !pList->bXplaneBad ){
    pList->eRefWay = FIND_REF_XPLANE;
    pList->iRefPick = iX;
    return;
  }
  if( nX==1 && iX<0 ){
    for(i=0; i<pList->nGhost; i++){
      if( pList->aGhost[i].eFormat==FIND_FMT_XPLANE ) iG = i;
    }
    if( pList->aGhost[iG].eKind!=FIND_GHOST_DANGLING ){
      pList->eRefWay = FIND_REF_LONE_GHOST;
      pList->iRefGhost = iG;
      return;
    }
    iG = -1;
  }
  /* the JSON step: the first entry by path of the most preferred JSON
  ** name, files and ghosts alike */
  pList->eRefWay = FIND_REF_JSON;
  for(i=0; i<pList->nGhost; i++){
    const ProfsumFindGhost *g = &pList->aGhost[i];
    if( FIND_IS_JSON(g->eFormat) && (iG<0 || g->eFormat<pList->aGhost[iG].eFormat) ) iG = i;
  }
  if( iG>=0 && (iJson<0 || pList->aGhost[iG].eFormat<pList->aRow[iJson].eFormat
                || (pList->aGhost[iG].eFormat==pList->aRow[iJson].eFormat
                    && profsumFindPathCmp(pList->aGhost[iG].zPath, pList->aRow[iJson].zPath)<0)) ){
    pList->iRefGhost = iG;
  }else{
    pList->iRefPick = iJson;
  }
}

/* What a ghost of kind eKind is, in words (static text). */
static const char *profsumFindGhostWhat(int eKind){
  return eKind==FIND_GHOST_DIR ? "a directory"
       : eKind==FIND_GHOST_DANGLING ? "a dangling symbolic link"
       : "not a regular file (a FIFO, socket or device)";
}

/* The quality warning of an import that read profsum's pick of pList
** where the reference reads another file or fails (0 when it reads the
** same file, or profsum reads none; *pOom set when it cannot be made). */
static char *profsumFindRefNote(const ProfsumFindList *pList, int *pOom){
  sqlite3_str *pOut;
  const ProfsumFindGhost *g = pList->iRefGhost>=0 ? &pList->aGhost[pList->iRefGhost] : 0;
  sqlite3_int64 i, nX = pList->nXplane + pList->nGhostX;
  char *z;
  *pOom = 0;
  if( pList->iPicked<0 || pList->iRefPick==pList->iPicked ) return 0;
  pOut = sqlite3_str_new(0);
  if( pList->iRefPick>=0 ){
    sqlite3_str_appendf(pOut, "The reference summarizer would read '%s' in this folder, where profsum "
                        "read '%s': ", pList->aRow[pList->iRefPick].zPath, pList->aRow[pList->iPicked].zPath);
  }else{
    sqlite3_str_appendf(pOut, "The reference summarizer would fail on this folder, where profsum read "
                        "'%s': ", pList->aRow[pList->iPicked].zPath);
  }
  if( pList->eRefWay==FIND_REF_LONE_GHOST ){
    sqlite3_str_appendf(pOut, "the only entry named *.xplane.pb, '%s', is %s, which it would try to "
                        "read as the XPlane", g->zPath, profsumFindGhostWhat(g->eKind));
  }else{
    if( nX>1 && pList->nGhostX>0 ){
      /* the first ghost named *.xplane.pb makes several */
      for(i=0; pList->aGhost[i].eFormat!=FIND_FMT_XPLANE; i++){}
      sqlite3_str_appendf(pOut, "it counts every entry named *.xplane.pb, and '%s' (%s) makes %lld "
                          "of them, %s", pList->aGhost[i].zPath,
                          profsumFindGhostWhat(pList->aGhost[i].eKind), nX,
                          g ? "so it turns to the trace JSON; " : pList->iRefPick>=0
                          ? "so it reads the trace JSON instead" : "and with several and no trace JSON it fails");
    }
    if( g ){
      sqlite3_str_appendf(pOut, "the trace JSON it picks, '%s', is %s, which it cannot read",
                          g->zPath, profsumFindGhostWhat(g->eKind));
    }
  }
  sqlite3_str_appendf(pOut, " (profsum looks at files only).");
  z = sqlite3_str_finish(pOut);
  if( z==0 ) *pOom = 1;
  return z;
}

/*
** Walk zDir (a NUL-terminated path, as given by the user) into pList, which
** must be empty (reset).  On success the rows are sorted and the picks set.
** On error pList is left empty and *pzErr holds a message without function
** prefix (sqlite3_malloc'd, caller frees; NULL for SQLITE_NOMEM).
** Returns SQLITE_OK, SQLITE_ERROR or SQLITE_NOMEM.
*/
int profsumFindCollect(const char *zDir, ProfsumFindList *pList,
                              char **pzErr){
  ProfsumFindWalk w;
  struct stat st;
  size_t n = strlen(zDir);
  sqlite3_int64 i, iJson, iX = -1;
  int rc;

  *pzErr = 0;
  memset(&w, 0, sizeof(w));
  w.pList = pList;
  w.zDir = zDir;
  profsumFindListReset(pList);

  if( stat(zDir, &st)!=0 ){
    int e = errno;
    if( e==ENOENT || e==ENOTDIR || n==0 ){
      rc = profsumFindWalkErr(&w, "'%q': no such directory", zDir);
    }else{
      rc = profsumFindWalkErr(&w, "'%q': cannot access directory (%s)",
                              zDir, strerror(e));
    }
    goto done;
  }
  if( !S_ISDIR(st.st_mode) ){
    rc = profsumFindWalkErr(&w, "'%q': not a directory", zDir);
    goto done;
  }
  /* zBuf = zDir without trailing '/' (but "/" stays "/"). */
  while( n>1 && zDir[n-1]=='/' ) n--;
  w.nBufAlloc = n + 256;
  w.zBuf = sqlite3_malloc64(w.nBufAlloc);
  if( w.zBuf==0 ){ rc = SQLITE_NOMEM; goto done; }
  memcpy(w.zBuf, zDir, n);
  w.zBuf[n] = 0;
  w.nBuf = n;

  rc = profsumFindWalkDir(&w, 0);
  if( rc!=SQLITE_OK ) goto done;

  if( pList->nRow>1 ){
    qsort(pList->aRow, (size_t)pList->nRow, sizeof(ProfsumFindRow),
          profsumFindRowCmp);
  }
  /* JSON pick: the first row of the most preferred JSON format present. */
  for(i=0; i<pList->nRow; i++){
    int e = pList->aRow[i].eFormat;
    if( !FIND_IS_JSON(e) ) continue;
    if( pList->iPicked<0 || e<pList->aRow[pList->iPicked].eFormat ){
      pList->iPicked = i;
    }
  }
  if( pList->nGhost>1 ){
    qsort(pList->aGhost, (size_t)pList->nGhost, sizeof(ProfsumFindGhost),
          profsumFindGhostCmp);
  }
  /* profsum's pick (§1.1 steps 1-3 over the files): a lone .xplane.pb
  ** file that decodes, else the JSON pick. */
  iJson = pList->iPicked;
  for(i=0; pList->nXplane==1 && i<pList->nRow; i++){
    if( pList->aRow[i].eFormat==FIND_FMT_XPLANE ){
      int ok = profsumFindXPlaneDecodes(pList->aRow[i].zPath);
      if( ok<0 ){ rc = SQLITE_NOMEM; goto done; }
      pList->bXplaneBad = !ok;
      iX = i;
      if( ok ) pList->iPicked = i;
    }
  }
  profsumFindRefPick(pList, iJson, iX);

done:
  sqlite3_free(w.zBuf);
  if( rc!=SQLITE_OK ){
    profsumFindListReset(pList);
    *pzErr = w.zErr;
  }else{
    sqlite3_free(w.zErr);
  }
  return rc;
}

/* What an error that found nothing to read adds when the folder holds
** *.xplane.riegeli files (static text; "" when it holds none). */
const char *profsumFindRiegeliHint(const ProfsumFindList *pList){
  return pList->nRiegeli>0 ? "; the *.xplane.riegeli files there " PROFSUM_RIEGELI_WHAT
         " are not supported yet: " PROFSUM_RIEGELI_INSTEAD : "";
}

/* qsort order of two rows (pointers) by folder, then by path. */
int profsumFindCmpDir(const void *pa, const void *pb){
  const ProfsumFindRow *a = *(const ProfsumFindRow*const*)pa, *b = *(const ProfsumFindRow*const*)pb;
  int na = a->nDir, nb = b->nDir, c;
  c = memcmp(a->zPath, b->zPath, (size_t)(na<nb ? na : nb));
  if( c==0 ) c = na - nb;
  return c ? c : strcmp(a->zPath, b->zPath);
}

/* 1 if rows a and b lie in the same folder. */
int profsumFindSameDir(const ProfsumFindRow *a, const ProfsumFindRow *b){
  int na = a->nDir;
  return na==b->nDir && memcmp(a->zPath, b->zPath, (size_t)na)==0;
}

/* qsort order of two rows (pointers) by host name. */
static int findCmpHost(const void *pa, const void *pb){
  const ProfsumFindRow *a = *(const ProfsumFindRow*const*)pa, *b = *(const ProfsumFindRow*const*)pb;
  int c = memcmp(a->zPath + a->iHost, b->zPath + b->iHost, (size_t)(a->nHost<b->nHost ? a->nHost : b->nHost));
  return c ? c : a->nHost - b->nHost;
}

/* The note of profsumPickTraceNote for list (0 when none; sqlite3_malloc'd;
** *pOom set when it could not be made).  O(n log n) in the JSON rows. */
static char *findPickNote(const ProfsumFindList *pList, int *pOom){
  const ProfsumFindRow *p, *pFirst = 0, *pLast = 0;
  const ProfsumFindRow **a;
  sqlite3_int64 i, n = 0, nDir = 0, nHost = 0, nH = 0;
  char *z = 0;
  *pOom = 0;
  if( pList->iPicked<0 ) return 0;
  p = &pList->aRow[pList->iPicked];
  if( p->eFormat==FIND_FMT_XPLANE ) return 0;    /* one XPlane: nothing left aside */
  a = sqlite3_malloc64(sizeof(*a)*(sqlite3_uint64)(pList->nRow+1));
  if( a==0 ){ *pOom = 1; return 0; }
  for(i=0; i<pList->nRow; i++){
    if( FIND_IS_JSON(pList->aRow[i].eFormat) ) a[n++] = &pList->aRow[i];
  }
  qsort(a, (size_t)n, sizeof(*a), profsumFindCmpDir);
  for(i=0; i<n; i++){
    if( i==0 || !profsumFindSameDir(a[i-1], a[i]) ){
      nDir++;
      if( pFirst==0 ) pFirst = a[i];
      if( !profsumFindSameDir(a[i], p) ) pLast = a[i];
    }
  }
  /* the hosts of the picked folder: its *.trace.json(.gz) files, by name */
  for(i=0; i<n; i++){
    if( profsumFindSameDir(a[i], p) && a[i]->eFormat!=FIND_FMT_PERFETTO && a[i]->nHost>0 ) a[nH++] = a[i];
  }
  qsort(a, (size_t)nH, sizeof(*a), findCmpHost);
  for(i=0; i<nH; i++){
    if( i==0 || findCmpHost(&a[i-1], &a[i])!=0 ) nHost++;
  }
  sqlite3_free(a);
  if( nDir>1 && pLast ){
    int nL = pLast->nDir;
    z = sqlite3_mprintf("This folder holds the traces of %lld profiling sessions (folders); profsum "
        "read '%s', the one the reference summarizer picks (perfetto_trace.json.gz before "
        "*.trace.json.gz, each the first by path%s), and left the others aside (the last by path: "
        "'%.*s'). Give a session folder or a file to read another.", nDir, p->zPath,
        profsumFindSameDir(pFirst, p) ? ": the oldest session when folders are named by time" : "",
        nL>0 ? nL : 1, nL>0 ? pLast->zPath : "/");
  }else if( nHost>1 ){
    z = sqlite3_mprintf("This session holds the traces of %lld hosts (*.trace.json files); profsum "
        "read '%s', the one the reference summarizer picks, and left the others aside: import each "
        "host's file to see it.", nHost, p->zPath);
  }else{
    return 0;
  }
  if( z==0 ) *pOom = 1;
  return z;
}

/* See find.h. */
int profsumPickTrace(const char *zDir, char **pzPath, char **pzReferencePick,
                     char **pzErr){
  return profsumPickTraceNote(zDir, pzPath, pzReferencePick, 0, 0, pzErr);
}

/* See find.h. */
int profsumPickTraceNote(const char *zDir, char **pzPath, char **pzReferencePick,
                         char **pzNote, char **pzRefNote, char **pzErr){
  ProfsumFindList list;
  char *zErr = 0;
  int rc;

  *pzPath = 0;
  if( pzNote ) *pzNote = 0;
  if( pzRefNote ) *pzRefNote = 0;
  if( pzReferencePick ) *pzReferencePick = 0;
  if( pzErr ) *pzErr = 0;
  memset(&list, 0, sizeof(list));
  rc = profsumFindCollect(zDir, &list, &zErr);
  if( rc==SQLITE_OK ){
    if( pzReferencePick && list.iRefPick>=0 ){
      *pzReferencePick = sqlite3_mprintf("%s", list.aRow[list.iRefPick].zPath);
      if( *pzReferencePick==0 ) rc = SQLITE_NOMEM;
    }
    if( rc==SQLITE_OK && list.iPicked>=0 ){
      *pzPath = sqlite3_mprintf("%s", list.aRow[list.iPicked].zPath);
      if( *pzPath==0 ) rc = SQLITE_NOMEM;
      if( rc==SQLITE_OK && pzNote ){
        int bOom = 0;
        *pzNote = findPickNote(&list, &bOom);
        if( bOom ) rc = SQLITE_NOMEM;
      }
      if( rc==SQLITE_OK && pzRefNote ){
        int bOom = 0;
        *pzRefNote = profsumFindRefNote(&list, &bOom);
        if( bOom ) rc = SQLITE_NOMEM;
      }
    }else if( rc==SQLITE_OK ){
      rc = SQLITE_NOTFOUND;
      const char *zRiegeli = profsumFindRiegeliHint(&list);
      /* the reference's sentence first (summary §1.1: with no JSON to fall
      ** back on, the XPlane step's own error when there were none or
      ** several .xplane.pb files, the JSON step's when a lone one did not
      ** decode; the folder as given, unquoted), then what profsum knows
      ** more */
      if( list.nXplane==1 ){
        zErr = sqlite3_mprintf("No profile trace JSON found under '%s'. Expected "
                 "perfetto_trace.json.gz or *.trace.json(.gz). Its .xplane.pb file does "
                 "not decode as an XSpace protobuf (read it directly to see where)%s.",
                 zDir, zRiegeli);
      }else if( list.nXplane>1 ){
        sqlite3_str *pStr = sqlite3_str_new(0);
        sqlite3_int64 i, nOut = 0;
        sqlite3_str_appendf(pStr, "Found multiple *.xplane.pb files under '%s': ", zDir);
        for(i=0; i<list.nRow; i++){
          if( list.aRow[i].eFormat!=FIND_FMT_XPLANE ) continue;
          sqlite3_str_appendf(pStr, "%s%s", nOut++ ? ", " : "", list.aRow[i].zPath);
        }
        sqlite3_str_appendf(pStr, ". No trace JSON to read instead (perfetto_trace.json.gz "
                 "or *.trace.json(.gz)): an XPlane is read from a folder only when it is the "
                 "only one; give one of them, or read them all as one session of several hosts "
                 "with the import option {\"hosts\": \"all\"} (CLI: --all-hosts)%s.", zRiegeli);
        zErr = sqlite3_str_finish(pStr);
      }else{
        zErr = sqlite3_mprintf("No *.xplane.pb file found under '%s'. No trace JSON either "
                 "(perfetto_trace.json.gz or *.trace.json(.gz))%s.", zDir, zRiegeli);
      }
      if( zErr==0 ) rc = SQLITE_NOMEM;
    }
    if( rc==SQLITE_NOMEM ){
      sqlite3_free(*pzPath);
      *pzPath = 0;
      if( pzReferencePick ){
        sqlite3_free(*pzReferencePick);
        *pzReferencePick = 0;
      }
      if( pzNote ){ sqlite3_free(*pzNote); *pzNote = 0; }
      if( pzRefNote ){ sqlite3_free(*pzRefNote); *pzRefNote = 0; }
    }
  }
  profsumFindListReset(&list);
  if( pzErr ) *pzErr = zErr; else sqlite3_free(zErr);
  return rc;
}

/* ------------------------------------------------------------------------
** The virtual table.
*/

/* Column numbers; must match the sqlite3_declare_vtab() string below. */
#define PROFSUM_FIND_COL_PATH      0
#define PROFSUM_FIND_COL_HOST      1
#define PROFSUM_FIND_COL_SESSION   2
#define PROFSUM_FIND_COL_SIZE      3
#define PROFSUM_FIND_COL_FORMAT    4
#define PROFSUM_FIND_COL_PICKED    5
#define PROFSUM_FIND_COL_REFPICK   6
#define PROFSUM_FIND_COL_DIR       7   /* HIDDEN input */
#define PROFSUM_FIND_COL_OPTIONS   8   /* HIDDEN input, optional */

#define PROFSUM_FIND_SCHEMA \
  "CREATE TABLE x(path TEXT, host TEXT, session TEXT, size INTEGER, " \
  "format TEXT, picked INTEGER, reference_pick INTEGER, dir HIDDEN, options HIDDEN)"

typedef struct ProfsumFindCursor ProfsumFindCursor;
struct ProfsumFindCursor {
  ProfsumRowCursor rows;    /* base class, current row, rows.nRow (=
                            ** list.nRow): must be first */
  ProfsumFindList list;     /* Rows of the current scan, owned */
  char *zDir;               /* Copy of the dir argument (NULL if NULL), owned */
  char *zOpts;              /* Copy of the options argument, or NULL, owned */
  char *aSel;               /* per row: picked with the options (NULL: none given) */
};

/*
** xConnect (eponymous only: there is no xCreate).  Declares the schema and
** marks the table DIRECTONLY (profsumVtabConnectFileReader): it lists, and
** reveals the sizes of, files anywhere the process can read, so it must
** only run from SQL the application itself submits.
*/
static int profsumFindConnect(sqlite3 *db, void *pAux, int argc,
                              const char *const *argv, sqlite3_vtab **ppVtab,
                              char **pzErr){
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  return profsumVtabConnectFileReader(db, PROFSUM_FIND_SCHEMA, sizeof(sqlite3_vtab), ppVtab);
}

/* Free everything the cursor owns and leave it at EOF (xFilter, xClose). */
static void profsumFindCursorReset(ProfsumRowCursor *pRows){
  ProfsumFindCursor *pCur = (ProfsumFindCursor*)pRows;
  profsumFindListReset(&pCur->list);
  sqlite3_free(pCur->zDir);
  pCur->zDir = 0;
  sqlite3_free(pCur->zOpts);
  pCur->zOpts = 0;
  sqlite3_free(pCur->aSel);
  pCur->aSel = 0;
  pRows->iRow = pRows->nRow = 0;
}

/* xOpen: a new cursor with no rows. */
static int profsumFindOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  int rc = profsumRowCursorOpen(sizeof(ProfsumFindCursor), profsumFindCursorReset, ppCur);
  (void)pVtab;
  if( rc==SQLITE_OK ){
    ProfsumFindCursor *pCur = (ProfsumFindCursor*)*ppCur;
    pCur->list.iPicked = -1;
    pCur->list.iRefPick = -1;
  }
  return rc;
}

/* xColumn.  Texts are copied (SQLITE_TRANSIENT): the rows die at the next
** xFilter. */
static int profsumFindColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                             int iCol){
  ProfsumFindCursor *pCur = (ProfsumFindCursor*)cur;
  const ProfsumFindRow *pRow = &pCur->list.aRow[pCur->rows.iRow];
  switch( iCol ){
    case PROFSUM_FIND_COL_PATH:
      sqlite3_result_text(ctx, pRow->zPath, pRow->nPath, SQLITE_TRANSIENT);
      break;
    case PROFSUM_FIND_COL_HOST:
      if( pRow->nHost>=0 ){
        sqlite3_result_text(ctx, pRow->zPath + pRow->iHost, pRow->nHost,
                            SQLITE_TRANSIENT);
      }
      break;
    case PROFSUM_FIND_COL_SESSION:
      if( pRow->nSession>=0 ){
        sqlite3_result_text(ctx, pRow->zPath + pRow->iSession, pRow->nSession,
                            SQLITE_TRANSIENT);
      }
      break;
    case PROFSUM_FIND_COL_SIZE:
      sqlite3_result_int64(ctx, pRow->iSize);
      break;
    case PROFSUM_FIND_COL_FORMAT:
      sqlite3_result_text(ctx, azProfsumFindFormat[pRow->eFormat], -1,
                          SQLITE_STATIC);
      break;
    case PROFSUM_FIND_COL_PICKED:
      sqlite3_result_int(ctx, pCur->aSel ? pCur->aSel[pCur->rows.iRow]!=0
                                         : pCur->rows.iRow==pCur->list.iPicked);
      break;
    case PROFSUM_FIND_COL_REFPICK:
      sqlite3_result_int(ctx, pCur->rows.iRow==pCur->list.iRefPick);
      break;
    case PROFSUM_FIND_COL_OPTIONS:
      if( pCur->zOpts ) sqlite3_result_text(ctx, pCur->zOpts, -1, SQLITE_TRANSIENT);
      break;
    default:
      assert( iCol==PROFSUM_FIND_COL_DIR );
      if( pCur->zDir ){
        sqlite3_result_text(ctx, pCur->zDir, -1, SQLITE_TRANSIENT);
      }
      break;
  }
  return SQLITE_OK;
}

/*
** Query plan protocol (xBestIndex → xFilter):
**
**   idxNum  meaning                                   argv
**   ------  ----------------------------------------  ---------------
**     1     usable "dir = ?" constraint               argv[0] = dir
**     3     and an "options = ?" constraint           argv[1] = options
**     0     no dir constraint at all                  (xFilter errors:
**                                                      missing argument)
**
** The function's arguments are constraints on its hidden columns, and a
** query can add more (`profsum_find_traces(?) WHERE dir IN (...)`): every
** usable one is an argument (profsumVtabInputArgs), the dir ones first,
** then the options ones; bits 2-5 of idxNum count the dir constraints
** beyond the first, bits 6-9 those of the options.  xFilter lists nothing
** when the constraints of a column differ: no row has both values.
**
** A dir or options constraint that exists but is not usable in this plan
** returns SQLITE_CONSTRAINT so that SQLite picks another join order: a
** plan without the options (idxNum 1) would list the rows of no options,
** whose hidden options column (NULL) then fails the constraint SQLite
** checks, so `FROM o, profsum_find_traces(?, o.opts)` gave no rows.  The
** constraints used are omitted (omit=1): the function itself applies them.
*/
#define FIND_MAX_ARGS 8     /* constraints taken per column (16 fit in idxNum) */
static int profsumFindBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, nDir, nOpts, bPartial = 0;
  (void)pVtab;
  nDir = profsumVtabInputArgs(pInfo, PROFSUM_FIND_COL_DIR, 0, FIND_MAX_ARGS, &bPartial);
  nOpts = profsumVtabInputArgs(pInfo, PROFSUM_FIND_COL_OPTIONS, nDir>0 ? nDir : 0, FIND_MAX_ARGS,
                               &bPartial);
  if( nDir<0 || nOpts<0 ) return SQLITE_CONSTRAINT;
  if( nDir>0 ){
    pInfo->idxNum = 1 | ((nDir-1)<<2);
    if( nOpts>0 ) pInfo->idxNum |= 2 | ((nOpts-1)<<6);
    pInfo->estimatedCost = 1000.0*(bPartial ? PROFSUM_VTAB_PARTIAL_COST : 1.0);
    pInfo->estimatedRows = 10;
  }else{
    /* options alone: not read (xFilter says the dir is missing) */
    for(i=0; i<pInfo->nConstraint; i++){
      pInfo->aConstraintUsage[i].argvIndex = 0;
      pInfo->aConstraintUsage[i].omit = 0;
    }
    pInfo->idxNum = 0;
    pInfo->estimatedCost = 1e12;
    pInfo->estimatedRows = 10;
  }
  return SQLITE_OK;
}

/* xFilter's options argument zOpts: the picks of an import with those
** options (profsumPickOptions, profsumFindSelect) into pCur->aSel.  SQLITE_OK,
** SQLITE_ERROR with *pzErr, or SQLITE_NOMEM. */
static int findFilterOptions(ProfsumFindCursor *pCur, const char *zOpts, char **pzErr){
  char *zSession = 0;
  int hostsAll = 0, rc;
  if( zOpts==0 ) return SQLITE_NOMEM;
  pCur->zOpts = sqlite3_mprintf("%s", zOpts);
  if( pCur->zOpts==0 ) return SQLITE_NOMEM;
  rc = profsumPickOptions(zOpts, &zSession, &hostsAll, pzErr);
  if( rc==SQLITE_OK ){
    pCur->aSel = profsumMallocZero((sqlite3_uint64)pCur->list.nRow + 1);
    if( pCur->aSel==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = profsumFindSelect(&pCur->list, pCur->zDir, zSession, hostsAll, pCur->aSel, 0, pzErr);
  }
  sqlite3_free(zSession);
  return rc;
}

/* xFilter: resets the cursor, then walks the directory (see the protocol
** above xBestIndex).  The argument is copied, never kept borrowed. */
static int profsumFindFilter(sqlite3_vtab_cursor *cur, int idxNum,
                             const char *idxStr, int argc,
                             sqlite3_value **argv){
  ProfsumFindCursor *pCur = (ProfsumFindCursor*)cur;
  sqlite3_vtab *pVtab = cur->pVtab;
  char *zErr = 0;
  int rc;
  int nDir = (idxNum & 1) ? 1 + ((idxNum>>2) & 15) : 0;
  int nOpts = (idxNum & 2) ? 1 + ((idxNum>>6) & 15) : 0;
  (void)idxStr;

  profsumFindCursorReset(&pCur->rows);
  if( nDir==0 || argc<nDir+nOpts ){
    profsumVtabErr(pVtab, "profsum_find_traces: missing required argument DIR");
    return SQLITE_ERROR;
  }
  /* constraints of one column that differ: no rows */
  rc = profsumVtabArgsAgree(argv, nDir);
  if( rc>0 && nOpts>0 ) rc = profsumVtabArgsAgree(argv + nDir, nOpts);
  if( rc<=0 ) return rc<0 ? SQLITE_NOMEM : SQLITE_OK;
  rc = profsumVtabPathArg(pVtab, "profsum_find_traces", argv[0], &pCur->zDir);
  if( rc || pCur->zDir==0 ) return rc;              /* NULL: no rows */
  rc = profsumFindCollect(pCur->zDir, &pCur->list, &zErr);
  pCur->rows.nRow = pCur->list.nRow;
  if( rc==SQLITE_OK && nOpts>0 && sqlite3_value_type(argv[nDir])!=SQLITE_NULL ){
    rc = findFilterOptions(pCur, (const char*)sqlite3_value_text(argv[nDir]), &zErr);
  }
  if( rc==SQLITE_ERROR ){
    profsumVtabErr(pVtab, "profsum_find_traces: %s", zErr);
  }
  sqlite3_free(zErr);
  return rc;
}

static sqlite3_module profsumFindModule = {
  .iVersion    = 0,
  .xCreate     = 0,           /* eponymous-only: no CREATE VIRTUAL TABLE */
  .xConnect    = profsumFindConnect,
  .xBestIndex  = profsumFindBestIndex,
  .xDisconnect = profsumVtabDisconnect,
  .xDestroy    = 0,
  .xOpen       = profsumFindOpen,
  .xClose      = profsumRowCursorClose,
  .xFilter     = profsumFindFilter,
  .xNext       = profsumRowCursorNext,
  .xEof        = profsumRowCursorEof,
  .xColumn     = profsumFindColumn,
  .xRowid      = profsumRowCursorRowid,
};

/* See profsum_int.h.  Registers the profsum_find_traces module. */
int profsumRegisterFind(sqlite3 *db, char **pzErr){
  int rc = sqlite3_create_module(db, "profsum_find_traces",
                                 &profsumFindModule, 0);
  if( rc!=SQLITE_OK && pzErr && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("profsum: cannot register profsum_find_traces "
                             "(%s)", sqlite3_errstr(rc));
  }
  return rc;
}
