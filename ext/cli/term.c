/*
** term.c — terminal-safe text.
**
** Trace-derived text (op names, region paths, process names, labels, file
** names) may hold terminal control sequences (ESC [ ... CSI, ESC ] ... OSC
** that sets the window title or writes the clipboard, bare C1 controls)
** and newlines that would break a markdown table.  Written to a file or a
** pipe, every byte stays as the reference tool writes it; written to a
** terminal (isatty), each unsafe character is shown as a visible escape:
**
**   \n  \r          newline (where it is not the text's own line end), CR
**   \xNN            any other C0 control but TAB, DEL (0x7f), and each byte
**                   that is not part of valid UTF-8 (0x80..0xff alone)
**   \uNNNN          a C1 control (U+0080..U+009F) and the bidirectional
**                   embedding, override and isolate controls (U+202A..U+202E,
**                   U+2066..U+2069), which reorder what the terminal shows
**
** TAB stays.  A backslash is not doubled, so a name that holds the
** characters "\x1b" looks the same as one that holds ESC: the bytes of a
** file written with --output are the reference.
**
** Here: the UTF-8 reader and the rules (what is unsafe, its visible form),
** writing to a stream, and the same for the strings inside JSON text
** (jsonVisible) and for a markdown table cell (bufCellVisible).
*/
#include "cli.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int g_bOutTty = 0;           /* stdout is a terminal (set in main) */
int g_bErrTty = 0;           /* stderr is a terminal (set in main) */

/* The length (1..4) of the valid UTF-8 sequence at z (n bytes available,
** n >= 1), its code point in *pC; 0 when z[0] does not start one (a stray
** continuation byte, an overlong form, a surrogate, above U+10FFFF, or a
** sequence cut short). */
static int utf8Seq(const unsigned char *z, size_t n, unsigned *pC){
  unsigned c = z[0], min;
  int len, i;
  if( c<0x80 ){ *pC = c; return 1; }
  if( c>=0xc2 && c<=0xdf ){ len = 2; c &= 0x1f; min = 0x80; }
  else if( c>=0xe0 && c<=0xef ){ len = 3; c &= 0x0f; min = 0x800; }
  else if( c>=0xf0 && c<=0xf4 ){ len = 4; c &= 0x07; min = 0x10000; }
  else return 0;
  if( n<(size_t)len ) return 0;
  for(i=1; i<len; i++){
    if( (z[i]&0xc0)!=0x80 ) return 0;
    c = (c<<6) | (z[i]&0x3f);
  }
  if( c<min || c>0x10ffff || (c>=0xd800 && c<=0xdfff) ) return 0;
  *pC = c;
  return len;
}

/* 1 if code point c must not reach a terminal as is (the rules at the top
** of this file); a newline only when !bKeepNl. */
static int visUnsafe(unsigned c, int bKeepNl){
  if( c=='\t' ) return 0;
  if( c=='\n' ) return !bKeepNl;
  if( c<0x20 || c==0x7f ) return 1;
  if( c>=0x80 && c<0xa0 ) return 1;
  if( (c>=0x202a && c<=0x202e) || (c>=0x2066 && c<=0x2069) ) return 1;
  return 0;
}

/* The visible form of an unsafe code point c (visUnsafe) into z, which
** holds at least 8 bytes; returns its length (2 to 6). */
static int visForm(unsigned c, char *z){
  if( c=='\n' ){ memcpy(z, "\\n", 3); return 2; }
  if( c=='\r' ){ memcpy(z, "\\r", 3); return 2; }
  if( c<0x80 ) return snprintf(z, 8, "\\x%02x", c);
  return snprintf(z, 8, "\\u%04x", c);
}

/* Append the first n bytes of z to the buffer zOut (capacity nOut, at
** least 1) as a terminal may show them (the rules above; newlines kept when
** bKeepNl), NUL-terminated.  Stops before a unit that would not fit, so the
** result never ends inside a UTF-8 sequence or an escape.  Returns the
** length written.  Needs no allocation (used on error paths). */
size_t visibleInto(char *zOut, size_t nOut, const char *z, size_t n, int bKeepNl){
  const unsigned char *u = (const unsigned char*)z;
  size_t i = 0, j = 0;
  while( i<n ){
    unsigned c;
    char e[8];
    int len = utf8Seq(u+i, n-i, &c), k;
    const char *zUnit;
    if( len==0 ){                          /* a byte that is not UTF-8 */
      k = snprintf(e, sizeof(e), "\\x%02x", u[i]);
      zUnit = e;
      len = 1;
    }else if( visUnsafe(c, bKeepNl) ){
      k = visForm(c, e);
      zUnit = e;
    }else{
      k = len;
      zUnit = (const char*)u+i;
    }
    if( j+(size_t)k+1>nOut ) break;
    memcpy(zOut+j, zUnit, (size_t)k);
    j += (size_t)k;
    i += (size_t)len;
  }
  zOut[j] = 0;
  return j;
}

/* The visible form of z[0..n) (visibleInto) in a new malloc'd buffer,
** its length in *pnOut; 0 when out of memory (the caller decides). */
char *visibleAlloc(const char *z, size_t n, int bKeepNl, size_t *pnOut){
  size_t nOut = n*4 + 1;                 /* each byte gives at most 4 */
  char *zOut;
  if( n>(SIZE_MAX-1)/4 ) return 0;
  zOut = malloc(nOut);
  if( zOut==0 ) return 0;
  *pnOut = visibleInto(zOut, nOut, z, n, bKeepNl);
  return zOut;
}

/* Write n bytes of z to stream f, as visible text when bTty (newlines
** kept when bKeepNl).  Out of memory: written as is, since an error
** message must still come out (an error path). */
void writeVisible(FILE *f, int bTty, const char *z, size_t n, int bKeepNl){
  size_t nVis;
  char *zVis = bTty ? visibleAlloc(z, n, bKeepNl, &nVis) : 0;
  if( zVis ){
    fwrite(zVis, 1, nVis, f);
    free(zVis);
  }else{
    fwrite(z, 1, n, f);
  }
}

/* Append to b the visible form (JSON-escaped) of an unsafe code point c,
** or, when bByte, of a byte c that is not UTF-8: "\\x1b" in the JSON text
** is the four characters \x1b in the string. */
static void bufJsonVisible(Buf *b, unsigned c, int bByte){
  char e[8];
  int k = bByte ? snprintf(e, sizeof(e), "\\x%02x", c) : visForm(c, e), i;
  for(i=0; i<k; i++){
    if( e[i]=='\\' ) bufAppend(b, "\\\\", 2);
    else bufAppend(b, e+i, 1);
  }
}

/* The JSON text zJson with every unsafe character inside its strings
** (visUnsafe, newlines included, whether written raw or as an escape such
** as \n or \u001b) replaced by its visible form, and bytes that are not
** UTF-8 by \xNN; everything else byte for byte.  Text that is not JSON is
** transformed all the same (the parser that reads the result says what is
** wrong).  Returns a malloc'd string. */
char *jsonVisible(const char *zJson){
  const unsigned char *u = (const unsigned char*)zJson;
  size_t n = strlen(zJson), i = 0;
  int inStr = 0;
  Buf b;
  memset(&b, 0, sizeof(b));
  bufAppend(&b, "", 0);
  while( i<n ){
    unsigned c = u[i], cp = 0x110000;       /* 0x110000: no code point */
    size_t len = 1;
    if( !inStr || c=='"' ){
      if( c=='"' ) inStr = !inStr;
      bufAppend(&b, (const char*)u+i, 1);
      i++;
      continue;
    }
    if( c=='\\' && i+1<n ){
      len = 2;
      switch( u[i+1] ){
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'b': cp = 0x08; break;
        case 'f': cp = 0x0c; break;
        case 'u': {
          unsigned v = 0;
          size_t k;
          for(k=2; k<6 && i+k<n && isxdigit(u[i+k]); k++){
            v = v*16 + (unsigned)(isdigit(u[i+k]) ? u[i+k]-'0' : (u[i+k]|0x20)-'a'+10);
          }
          if( k==6 ){ cp = v; len = 6; }  /* a surrogate is never unsafe: kept */
          break;
        }
        default: break;                      /* \" \\ \/ : kept */
      }
      if( cp<0x110000 && visUnsafe(cp, 0) ) bufJsonVisible(&b, cp, 0);
      else bufAppend(&b, (const char*)u+i, len);
      i += len;
      continue;
    }
    len = (size_t)utf8Seq(u+i, n-i, &cp);
    if( len==0 ){ bufJsonVisible(&b, c, 1); len = 1; }
    else if( visUnsafe(cp, 0) ) bufJsonVisible(&b, cp, 0);
    else bufAppend(&b, (const char*)u+i, len);
    i += len;
  }
  return b.z;
}

/* Append to b the text z (0: "") as a terminal shows it in a table cell:
** visible, a newline as \n. */
void bufCellVisible(Buf *b, const char *z){
  size_t n;
  char *zVis;
  if( z==0 ) return;
  zVis = visibleAlloc(z, strlen(z), 0, &n);
  if( zVis==0 ) fail(EXIT_FAIL, "out of memory");
  bufAppend(b, zVis, n);
  free(zVis);
}
