#!/usr/bin/env python3
# doc_refs.py ROOT: every reference the documentation and the code comments make, checked against
# the tree under ROOT; prints "FILE:LINE: what is wrong" for each broken one (nothing when all hold).
# Checked: markdown links [text](target#anchor) in *.md (target relative to the file, the anchor a
# heading of the target as GitHub slugs it); docs/*.md paths named in code, Makefile and docs, and
# their "Section" when one follows (a heading of that page that starts with it); the product
# (src, include, tools, docs, the Makefile) naming lab/, the laboratory it must not depend on;
# ticket numbers ("issue 12") in README.md and docs, which a reader should not meet.
import os
import re
import sys

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
DOC = re.compile(r'\bdocs/[A-Za-z0-9_./-]*\.md\b')
# a page and its section, which a comment may wrap over two lines
SECTION = re.compile(r'\b(docs/[A-Za-z0-9_./-]*\.md)["\')`]*,\s*(?:(?:\*|#|//)\s*)?"([^"]{1,200})"')
WRAP = re.compile(r'\s*\n\s*(?:\*|#|//)?\s*')
TICKET = re.compile(r'\b(issue|session|ticket)\s+#?[0-9]+', re.I)
PRODUCT = ('src/', 'include/', 'tools/', 'docs/', 'Makefile')


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def headings(path, cache={}):
    if path not in cache:
        hs = []
        with open(path, encoding='utf-8') as f:
            for line in f:
                m = re.match(r'#{1,6}\s+(.*)', line)
                if m:
                    hs.append(m.group(1).strip())
        cache[path] = hs
    return cache[path]


def plain(text):
    return re.sub(r'[`*]', '', text).strip()


def files(root):
    for d, subs, names in os.walk(root):
        # tests/ is left out: this checker's own test holds broken references on purpose
        subs[:] = [s for s in subs if not s.startswith('.') and s not in ('build', 'build-asan', 'bin', 'tests')]
        for n in names:
            if n.endswith(('.md', '.c', '.h', '.cc', '.sh', '.py')) or n == 'Makefile':
                yield os.path.relpath(os.path.join(d, n), root)


def check_link(root, rel, target):
    if re.match(r'[a-z]+:', target):
        return None
    path, _, anchor = target.partition('#')
    full = os.path.normpath(os.path.join(root, os.path.dirname(rel), path)) if path else os.path.join(root, rel)
    if not os.path.exists(full):
        return 'link to a missing file: ' + target
    if anchor and full.endswith('.md') and anchor not in [slug(h) for h in headings(full)]:
        return 'link to a missing heading: ' + target
    return None


def check_doc(root, name, section):
    full = os.path.join(root, name)
    if not os.path.exists(full):
        return 'names a missing page: ' + name
    if section and not any(plain(h).startswith(plain(section)) for h in headings(full)):
        return 'names a missing section of %s: "%s"' % (name, section)
    return None


def check_file(root, rel):
    out = []
    product = rel.startswith(PRODUCT)
    with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
        text = f.read()
    for no, line in enumerate(text.split('\n'), 1):
        problems = []
        if rel.endswith('.md'):
            problems += [check_link(root, rel, t) for t in LINK.findall(line)]
        problems += [check_doc(root, m.group(0), None) for m in DOC.finditer(line)]
        if product and re.search(r'(^|[\s(`"])lab/', line):
            problems.append('the product names lab/')
        if (rel == 'README.md' or rel.startswith('docs/')) and TICKET.search(line):
            problems.append('a ticket number: ' + TICKET.search(line).group(0))
        out += ['%s:%d: %s' % (rel, no, p) for p in problems if p]
    for m in SECTION.finditer(text):
        p = check_doc(root, m.group(1), WRAP.sub(' ', m.group(2)))
        if p and 'missing page' not in p:
            out.append('%s:%d: %s' % (rel, text.count('\n', 0, m.start()) + 1, p))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    bad = []
    for rel in sorted(files(root)):
        bad += check_file(root, rel)
    print('\n'.join(bad), end='\n' if bad else '')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
