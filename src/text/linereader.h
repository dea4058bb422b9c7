/* linereader.h: the one line reader for text input: a file or a descriptor (a pipe, a terminal)
 * read line by line, streaming, so that a program answering each line of a pipe sees each line
 * as soon as it is complete. A line loses its "\n" and a "\r" before it (CRLF files read like
 * LF files); a last line without a newline still counts; the input loses a UTF-8 byte-order mark
 * (EF BB BF) at its start, which editors on Windows write and which would otherwise be glued to
 * the first word (one later in the input is text and stays). What is not text is an error, never
 * the end of the input: a NUL byte inside a line ("FILE:LINE: NUL byte in line"), a failed read
 * (a directory, EIO, a closed descriptor: "FILE: cannot read: ..."), and with LINEREADER_UTF8
 * invalid UTF-8 ("FILE:LINE: invalid UTF-8 at byte N of the line"), a line over
 * LINEREADER_MAX_LINE. Input that starts with
 * gzip's magic bytes (1f 8b, never the start of UTF-8 text) is decompressed on the way, files
 * and pipes alike, concatenated members included; damaged gzip data is an error naming the file.
 *
 *     linereader r;
 *     char *s;
 *     size_t n;
 *     if (linereader_init(&r, path, LINEREADER_UTF8, &err)) return err.code;
 *     while ((rc = linereader_next(&r, &s, &n, &err)) == 1) use(s, n, r.lineno);
 *     linereader_free(&r);     // rc: 0 at the end of the input, < 0 an error in err
 */
#ifndef NMT_LINEREADER_H
#define NMT_LINEREADER_H

#include <stddef.h>

#include "nmt.h"

/* Flags. */
#define LINEREADER_UTF8 1 /* a line that is not valid UTF-8 is an error */

/* A longer line is an error ("FILE:LINE: a line of more than 16 MiB"), so that input with no
 * newline (300 MB of one byte, 1.3 MB gzipped) cannot take the memory of the machine: the
 * buffer stays under twice this. A sentence, a document or a table row is far shorter. */
#define LINEREADER_MAX_LINE ((size_t)16 << 20)

typedef struct linereader {
    int fd;
    int own;          /* opened by linereader_init: closed by linereader_free */
    int flags;
    int eof;          /* read() has reported the end */
    char *name;       /* for messages: the path, or the name given with the descriptor */
    char *buf;        /* buf[pos..len) is read but not yet returned; one byte spare at the end */
    size_t len, pos, cap;
    long lineno;      /* lines returned so far: the number of the last one */
    int sniffed;      /* the first bytes were looked at for gzip's magic */
    struct lr_gzip *gz; /* the decompressor when the input is gzip data, else NULL */
} linereader;

/* Opens path for reading. */
int linereader_init(linereader *r, const char *path, int flags, nmt_err *err);
/* Reads an open descriptor (not closed by linereader_free); name is used in messages. A
 * descriptor that is not open (a closed standard input) is an error here already. */
int linereader_init_fd(linereader *r, int fd, const char *name, int flags, nmt_err *err);
/* The next line in *line (NUL-terminated, valid until the next call; *len bytes): 1; 0 at the
 * end of the input; a negative status with a message in err. Blocks until a line is there. */
int linereader_next(linereader *r, char **line, size_t *len, nmt_err *err);
/* 1 when linereader_next would not block: a whole line, the end of the input or an error is
 * there already; 0 while the writer of a pipe may still be composing the next line. */
int linereader_ready(linereader *r);
/* Accepts a zeroed or freed reader. */
void linereader_free(linereader *r);

#endif
