/*
** evstream.c — one stream of ProfsumEvent rows over either input format:
** the JSON scanner (trace_json.c over a gz.c source) or the XPlane adapter
** (xplane_rows.c), chosen by the file's content (profsumSniffFormat).
** trace_events, profsum_diagnostics, the track pass and profsum_trim read
** through it.  See profsum_reader.h for the contract.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "xplane_rows.h"
#include "pbwire.h"          /* PBW_MAX_DEPTH, PBW_MAX_LEN */

#include <string.h>
#include <sys/stat.h>

struct ProfsumStream {
  int eFmt;                 /* PROFSUM_FMT_* */
  ProfsumScan *pScan;       /* JSON */
  ProfsumXRows *pXr;        /* XPlane */
};

/* Does zPath end with zSuffix? */
static int endsWith(const char *zPath, const char *zSuffix){
  size_t n = strlen(zPath), m = strlen(zSuffix);
  return n>=m && memcmp(zPath + n - m, zSuffix, m)==0;
}

/* The format by the name alone. */
static int formatByName(const char *zPath){
  return (endsWith(zPath, ".xplane.pb") || endsWith(zPath, ".xplane.pb.gz"))
         ? PROFSUM_FMT_XPLANE : PROFSUM_FMT_JSON;
}

/* A varint at a[*pi] (below n): its value into *pv and *pi moved past it;
** 0 when it runs past n or over 10 bytes. */
static int sniffVarint(const unsigned char *a, size_t n, size_t *pi, uint64_t *pv){
  uint64_t v = 0;
  int k;
  for(k=0; k<10 && *pi<n; k++){
    unsigned char c = a[(*pi)++];
    v |= (uint64_t)(c & 0x7f) << (7*k);
    if( (c & 0x80)==0 ){ *pv = v; return 1; }
  }
  return 0;
}

/* A field's varint at a[*pi] in the n bytes sniffed (sniffVarint): 1 when
** read, 0 when it is not protobuf, 2 when it runs past the bytes sniffed
** of a file that goes on after them (bWhole 0: it may end there). */
static int sniffVarintOf(const unsigned char *a, size_t n, size_t *pi, uint64_t *pv, int bWhole){
  size_t i0 = *pi;
  if( sniffVarint(a, n, pi, pv) ) return 1;
  return !bWhole && n-i0<10 ? 2 : 0;
}

/* 1 when a[0..n), the first bytes of a file (or a message in them), can
** be the start of a protobuf message as protobuf's parsers read one: its
** fields have tags of at most 5 bytes and 32 bits, field numbers from 1
** and wire types 0 to 5, groups (3) closed by an end-group tag (4) of
** their own field and at most PBW_MAX_DEPTH deep, and values within the
** bytes (lengths under PBW_MAX_LEN).  bWhole: the message ends at n (the
** file does, or n is the message's own length), so a field or a group cut
** there is not protobuf; otherwise what the bytes sniffed cut counts as
** fine.  What lies inside length-delimited fields is not looked at: trace
** JSON fails this within its first bytes (its '{' or '[' opens a group
** that '}' or ']', tags of wire type 5, cannot close).  The decoder's own
** skipping (pbwire.c) reads a file through its window and reports every
** cut field as an error, which a sniff of the first 4 KiB cannot. */
static int sniffProtoStart(const unsigned char *a, size_t n, int bWhole){
  uint32_t aGroup[PBW_MAX_DEPTH];
  int nGroup = 0, r;
  size_t i = 0;
  while( i<n ){
    size_t i0 = i;
    uint64_t key, v;
    if( (r = sniffVarintOf(a, n, &i, &key, bWhole))!=1 ) return r==2;
    if( i-i0>5 || key>0xffffffffULL || (key>>3)==0 ) return 0;
    switch( key & 7 ){
      case 0:
        if( (r = sniffVarintOf(a, n, &i, &v, bWhole))!=1 ) return r==2;
        break;
      case 1: case 5: {
        size_t k = (key & 7)==1 ? 8 : 4;
        if( n-i<k ) return !bWhole;
        i += k;
        break;
      }
      case 2:
        if( (r = sniffVarintOf(a, n, &i, &v, bWhole))!=1 ) return r==2;
        if( v>(uint64_t)PBW_MAX_LEN ) return 0;
        if( v>n-i ) return !bWhole;
        i += (size_t)v;
        break;
      case 3:
        if( nGroup>=PBW_MAX_DEPTH ) return 0;
        aGroup[nGroup++] = (uint32_t)(key>>3);
        break;
      case 4:
        if( nGroup==0 || aGroup[nGroup-1]!=(uint32_t)(key>>3) ) return 0;
        nGroup--;
        break;
      default:
        return 0;
    }
  }
  return !bWhole || nGroup==0;
}

/* 1 when the n first bytes a of a file that reads as JSON by its first
** non-blank byte are an XSpace's all the same: an XSpace starts with the
** key of its first plane, 0x0A (a newline to JSON), then the plane's
** length, which is '[' or '{' for a plane of 91 or 123 bytes.  Such a
** plane lies within the bytes sniffed: it is taken for an XSpace when it
** is a whole protobuf message and the byte after it starts another
** XSpace field (or the file ends there). */
static int sniffSmallPlane(const unsigned char *a, size_t n){
  size_t len;
  if( n<2 || a[0]!=0x0A || (a[1]!='[' && a[1]!='{') ) return 0;
  len = a[1];
  if( n<2+len || !sniffProtoStart(a+2, len, 1) ) return 0;
  return n==2+len || a[2+len]==0x0A || a[2+len]==0x12 || a[2+len]==0x1A || a[2+len]==0x22;
}

/* profsumSniffFormat, or with byContent profsumSniffContent: where the
** content cannot tell, the name decides, or PROFSUM_FMT_UNKNOWN. */
static int sniffFormat(const char *zPath, int byContent){
  ProfsumSrc *pSrc = 0;
  char *zErr = 0;
  unsigned char a[4096];
  size_t n = 0, i = 0;
  struct stat st;
  int rc, bWhole = 0;
  /* a pipe can be read once: its bytes are the reader's, not the sniff's */
  if( stat(zPath, &st)!=0 || !S_ISREG(st.st_mode) ) return byContent ? PROFSUM_FMT_UNKNOWN : formatByName(zPath);
  rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
  sqlite3_free(zErr);
  zErr = 0;
  if( rc==SQLITE_NOMEM ) return PROFSUM_FMT_NOMEM;
  if( rc ) return byContent ? PROFSUM_FMT_UNKNOWN : formatByName(zPath);
  profsumSrcNoThread(pSrc);
  while( n<sizeof(a) ){
    size_t nGot = 0;
    rc = profsumSrcRead(pSrc, a+n, sizeof(a)-n, &nGot, &zErr);
    sqlite3_free(zErr);
    zErr = 0;
    if( rc || nGot==0 ){ bWhole = rc==SQLITE_OK; break; }
    n += nGot;
  }
  profsumSrcClose(pSrc);
  if( rc==SQLITE_NOMEM ) return PROFSUM_FMT_NOMEM;
  if( n==0 ) return byContent ? PROFSUM_FMT_UNKNOWN : formatByName(zPath);
  if( n>=3 && a[0]==0xEF && a[1]==0xBB && a[2]==0xBF ) i = 3;
  while( i<n && (a[i]==' ' || a[i]=='\t' || a[i]=='\n' || a[i]=='\r') ) i++;
  if( i<n && (a[i]=='{' || a[i]=='[') && !sniffSmallPlane(a, n) ){
    /* JSON by its first byte, unless the name says XPlane and the bytes
    ** are protobuf's: what protobuf reads as an XSpace is one */
    if( formatByName(zPath)==PROFSUM_FMT_XPLANE && sniffProtoStart(a, n, bWhole) ) return PROFSUM_FMT_XPLANE;
    return PROFSUM_FMT_JSON;
  }
  if( formatByName(zPath)==PROFSUM_FMT_XPLANE ) return PROFSUM_FMT_XPLANE;
  /* XSpace fields 1 (planes), 2 (errors), 3 (warnings), 4 (hostnames),
  ** length-delimited */
  if( a[0]==0x0A || a[0]==0x12 || a[0]==0x1A || a[0]==0x22 ) return PROFSUM_FMT_XPLANE;
  return PROFSUM_FMT_JSON;
}

/* See profsum_reader.h. */
int profsumSniffFormat(const char *zPath){ return sniffFormat(zPath, 0); }

/* See profsum_reader.h. */
int profsumSniffContent(const char *zPath){ return sniffFormat(zPath, 1); }

/* See profsum_reader.h. */
int profsumRefuseUnsupported(const char *zFunc, const char *zPath, char **pzErr){
  if( !endsWith(zPath, ".xplane.riegeli") ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: '%s': an .xplane.riegeli file " PROFSUM_RIEGELI_WHAT
      " is not supported yet: " PROFSUM_RIEGELI_INSTEAD, zFunc, zPath);
  return SQLITE_ERROR;
}

/* See profsum_reader.h. */
int profsumStreamOpen(const char *zFunc, const char *zPath, unsigned flags,
                      ProfsumDiagFn xDiag, void *pDiagCtx,
                      ProfsumStream **pp, char **pzErr){
  ProfsumStream *p;
  int rc;
  *pp = 0;
  if( (rc = profsumRefuseUnsupported(zFunc, zPath, pzErr))!=SQLITE_OK ) return rc;
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->eFmt = profsumSniffFormat(zPath);
  if( p->eFmt==PROFSUM_FMT_NOMEM ){
    sqlite3_free(p);
    return SQLITE_NOMEM;
  }
  if( flags & PROFSUM_SCAN_MNAMES ){
    flags &= ~(unsigned)PROFSUM_SCAN_MNAMES;
    if( p->eFmt==PROFSUM_FMT_JSON ) flags |= PROFSUM_SCAN_ARGKEYS;
  }
  if( p->eFmt==PROFSUM_FMT_XPLANE ){
    rc = profsumXRowsOpen(zFunc, zPath, flags, xDiag, pDiagCtx, &p->pXr, pzErr);
  }else{
    ProfsumSrc *pSrc = 0;
    char *zErr = 0;
    rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
    if( rc==SQLITE_OK ){
      rc = profsumScanOpen(pSrc, zFunc, flags & (PROFSUM_SCAN_ARGKEYS|PROFSUM_SCAN_ALLDETAILS),
                           xDiag, pDiagCtx,
                           &p->pScan, pzErr);
    }else if( zErr ){
      *pzErr = sqlite3_mprintf("%s: %s", zFunc, zErr);
      sqlite3_free(zErr);
    }
  }
  if( rc ){
    profsumStreamClose(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumStreamNext(ProfsumStream *p, ProfsumEvent **ppEv, char **pzErr){
  if( p->pScan ) return profsumScanNext(p->pScan, ppEv, pzErr);
  return profsumXRowsNext(p->pXr, ppEv, pzErr);
}

int profsumStreamFormat(ProfsumStream *p){ return p->eFmt; }
ProfsumScan *profsumStreamScan(ProfsumStream *p){ return p->pScan; }

/* See profsum_reader.h. */
int64_t profsumStreamEntries(ProfsumStream *p){
  return p->pScan ? profsumScanEntries(p->pScan) : profsumXRowsEvents(p->pXr);
}

/* See profsum_reader.h. */
void profsumStreamClose(ProfsumStream *p){
  if( p==0 ) return;
  profsumScanClose(p->pScan);
  profsumXRowsClose(p->pXr);
  sqlite3_free(p);
}
