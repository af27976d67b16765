/*
** tests/jsontree_test.c — unit tests of the JSON tree's arenas
** (ext/jsontree.c, jArenaBegin): what a tree built in an arena may do and
** when its memory goes.  Built with AddressSanitizer and UBSan by
** `make build/jsontree_test` (run by tests/test_jsontree_arena.py in
** `make test`), so a use after free, a leak or a double free fails it.
**
**   build/jsontree_test        one line per check, then "N passed, N failed";
**                              exit 1 on any failure
**
** The checks:
**   - a document built in an arena (objects past their first child array,
**     copied and literal keys, a member replaced, members removed, a
**     clone) writes the same text as the same document on the heap;
**   - a tree of an ended arena changed afterwards grows on the heap;
**   - a tree of arena A changed while arena B is open does not take B's
**     memory (B freed first, A's tree intact);
**   - nested arenas restore the outer one;
**   - every allocation made to fail in turn (SQLite's allocator replaced)
**     leaves a tree that jOom() reports or that is complete, and frees
**     cleanly (the leak checker sees the rest).
*/
#include "jsontree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nPass = 0, nFail = 0;

static void check(int ok, const char *zWhat){
  printf("%s %s\n", ok ? "ok  " : "FAIL", zWhat);
  if( ok ) nPass++; else nFail++;
}

/* A document of the summary's shape: nested objects and arrays, more than
** eight children (the child array grows), keys copied and literal, a
** member set twice, one removed, a clone of a part. */
static JNode *buildDoc(void){
  JNode *root = jObj(), *ops = jArr(), *meta = jObj(), *first;
  int i;
  char zKey[32];
  for(i=0; i<40; i++){
    JNode *o = jObj();
    snprintf(zKey, sizeof(zKey), "op.%d", i);
    jSetLit(o, "name", jStr(zKey, -1));
    jSetLit(o, "count", jInt(i));
    jSetLit(o, "total", jReal(i*1.25));
    jSet(o, "copied key", jBool(i%2));
    jSet(o, "copied key", jNull());          /* replaces the member */
    jPush(ops, o);
  }
  for(i=0; i<20; i++){
    snprintf(zKey, sizeof(zKey), "k%02d", i);
    jSet(meta, zKey, jStr("value \"quoted\"\n", -1));
  }
  jRemove(meta, "k05");
  jSetNew(meta, "new", jInt(-9223372036854775807LL - 1));
  first = jClone(jAt(ops, 0));      /* before ops is given away (then it may be freed) */
  jSetLit(root, "ops", ops);
  jSetLit(root, "meta", meta);
  jSetLit(root, "first_op", first);
  return root;
}

/* SQLite's allocator, wrapped so that one chosen allocation fails. */
static sqlite3_mem_methods memDefault;
static int nAlloc = 0, iFailAt = -1;
static void *failMalloc(int n){
  if( ++nAlloc==iFailAt ) return 0;
  return memDefault.xMalloc(n);
}
static void *failRealloc(void *p, int n){
  if( ++nAlloc==iFailAt ) return 0;
  return memDefault.xRealloc(p, n);
}

int main(void){
  char *zHeap, *zArena;
  JArena *pA = 0, *pB = 0;
  JNode *t, *c;
  int i, rc;

  setvbuf(stdout, 0, _IOLBF, 0);    /* each line out before a sanitizer's abort */
  /* the allocator wrapper, installed before SQLite initializes */
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memDefault);
  {
    sqlite3_mem_methods m = memDefault;
    m.xMalloc = failMalloc;
    m.xRealloc = failRealloc;
    sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  }
  sqlite3_initialize();

  /* 1. the same text built on the heap and in an arena */
  t = buildDoc();
  zHeap = jDump(t);
  jFree(t);
  rc = jArenaBegin(&pA);
  t = buildDoc();
  jArenaEnd(pA);
  check(rc==SQLITE_OK && t && (t->flags & JF_ARENA) && jAt(jGet(t, "ops"), 39)
        && (jGet(t, "ops")->flags & JF_A_ARENA), "a document built in an arena lies in it");
  zArena = jDump(t);
  check(zHeap && zArena && strcmp(zHeap, zArena)==0, "the same text as on the heap");
  check(zArena && strstr(zArena, "\"new\": -9223372036854775808") && !strstr(zArena, "\"k05\""),
        "members set, replaced and removed");

  /* 2. changed after its arena ended: growth on the heap */
  for(i=0; i<100; i++) jPush(jGet(t, "ops"), jInt(i));
  jSet(t, "added after the end", jInt(1));
  c = jObj();
  check(c && !(c->flags & JF_ARENA), "a node made after the end is on the heap");
  jSetLit(t, "heap child", c);
  check(!(jGet(t, "ops")->flags & JF_A_ARENA) && !(jGet(t, "added after the end")->flags & JF_KEY_LIT),
        "the grown child array and the new key are on the heap");
  jFree(t);
  jArenaFree(pA);
  pA = 0;
  sqlite3_free(zHeap);
  sqlite3_free(zArena);

  /* 3. a tree of arena A changed while arena B is open */
  {
    JNode *aHeap[20];
    char zKey[16];
    jArenaBegin(&pA);
    t = jObj();
    jArenaEnd(pA);
    for(i=0; i<20; i++) aHeap[i] = jInt(i);     /* on the heap: no arena open */
    jArenaBegin(&pB);
    for(i=0; i<20; i++){                        /* copied keys, a growing child array */
      snprintf(zKey, sizeof(zKey), "m%02d", i);
      jSet(t, zKey, aHeap[i]);
    }
    jArenaEnd(pB);
    jArenaFree(pB);                             /* B first */
    pB = 0;
  }
  zArena = jDump(t);
  check(zArena && strstr(zArena, "\"m00\": 0,") && strstr(zArena, "\"m19\": 19\n}"),
        "another arena's end leaves the tree intact");
  sqlite3_free(zArena);
  jFree(t);
  jArenaFree(pA);
  pA = 0;

  /* 4. nesting */
  jArenaBegin(&pA);
  jArenaBegin(&pB);
  jArenaEnd(pB);
  c = jObj();
  check(c && (c->flags & JF_ARENA), "the outer arena is open again after the inner one ends");
  jArenaEnd(pA);
  t = jObj();
  check(t && !(t->flags & JF_ARENA), "no arena open after both end");
  jFree(t);
  jFree(c);
  jArenaFree(pB);
  jArenaFree(pA);
  pA = pB = 0;

  /* 5. every allocation made to fail in turn, in an arena (its blocks)
  ** and on the heap (each node, key and array) */
  for(int bArena=1; bArena>=0; bArena--){
    int nAll, nOom = 0, nWhole = 0, bad = 0;
    nAlloc = 0;
    iFailAt = -1;
    if( bArena ) jArenaBegin(&pA);
    t = buildDoc();
    jArenaEnd(pA);
    zHeap = jDump(t);
    jFree(t);
    jArenaFree(pA);
    pA = 0;
    nAll = nAlloc;
    for(i=1; i<=nAll && zHeap; i++){
      nAlloc = 0;
      iFailAt = i;
      if( bArena && jArenaBegin(&pA)!=SQLITE_OK ){ nOom++; continue; }
      t = buildDoc();
      jArenaEnd(pA);
      if( jOom(t) ) nOom++;
      else{
        char *z = jDump(t);
        if( z && strcmp(z, zHeap)==0 ) nWhole++;
        else if( z ) bad++;                     /* a text, but not the document */
        else nOom++;                            /* jDump's own allocation failed */
        sqlite3_free(z);
      }
      jFree(t);
      jArenaFree(pA);
      pA = 0;
    }
    iFailAt = -1;
    printf("     (%s: %d allocations; %d failures reported, %d documents whole)\n",
           bArena ? "arena" : "heap", nAll, nOom, nWhole);
    check(zHeap && nAll>0 && bad==0 && nOom+nWhole==nAll, bArena
          ? "a failed allocation in an arena is reported, never a wrong document"
          : "a failed allocation on the heap is reported, never a wrong document");
    sqlite3_free(zHeap);
  }

  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
