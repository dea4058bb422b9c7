#!/usr/bin/env python3
"""gen_unicode.py: writes src/text/unicode_tables.h, the compiled-in Unicode tables behind src/text/unicode.c.

Run once (python3 scripts/gen_unicode.py > src/text/unicode_tables.h); the output is committed, so
nothing is read at run time.  Sources:
  * general categories and simple case mappings: python3's unicodedata / str.lower / str.upper;
  * the binary properties Perl's regexes use and unicodedata lacks (Alphabetic = \\p{Alpha},
    Lowercase = \\p{Lower}, White_Space = \\s on character strings), and the simple case mapping
    of the few characters whose full mapping expands (U+0130, U+1F80..): Perl's Unicode::UCD.
    Perl is the runtime of the Moses scripts we match (tokenizer.perl uses \\p{IsAlpha},
    \\p{IsLower}, \\s), so its tables are the exact definition.
Both must be the same Unicode version; the script checks that and fails otherwise.
Tables are runs/ranges (a few thousand entries), searched by bisection in unicode.c.
"""
import subprocess
import sys
import unicodedata

MAXCP = 0x110000

CATS = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
        "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf",
        "Cs", "Co"]


def perl(code):
    return subprocess.run(["perl", "-CS", "-MUnicode::UCD=prop_invlist,charinfo", "-e", code],
                          check=True, capture_output=True, text=True).stdout


def invlist(prop):
    return [int(x) for x in perl('print join(" ", prop_invlist("%s")), "\\n";' % prop).split()]


def category_runs():
    """(start, cat) for each maximal run of one category; runs tile 0..0x10FFFF."""
    runs = []
    prev = None
    for cp in range(MAXCP):
        c = CATS.index(unicodedata.category(chr(cp)))
        if c != prev:
            runs.append((cp, c))
            prev = c
    return runs


def simple_case_maps():
    """Simple (1:1) lower and upper mappings as dicts cp -> cp."""
    lower, upper, expanding = {}, {}, []
    for cp in range(MAXCP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        s = chr(cp)
        lo, up = s.lower(), s.upper()
        if len(lo) == 1:
            if lo != s:
                lower[cp] = ord(lo)
        else:
            expanding.append(cp)
        if len(up) == 1:
            if up != s:
                upper[cp] = ord(up)
        else:
            expanding.append(cp)
    # The full mapping of these expands (SpecialCasing.txt); their simple mapping is in
    # UnicodeData.txt, which unicodedata does not expose: ask Perl's charinfo.
    expanding = sorted(set(expanding))
    out = perl('for my $c (%s) { my $i = charinfo($c); '
               'print join(" ", $c, $i->{lower} || "-", $i->{upper} || "-"), "\\n"; }'
               % ",".join(str(c) for c in expanding))
    for line in out.splitlines():
        cp, lo, up = line.split()
        cp = int(cp)
        if lo != "-" and len(chr(cp).lower()) != 1:
            lower[cp] = int(lo, 16)
        if up != "-" and len(chr(cp).upper()) != 1:
            upper[cp] = int(up, 16)
    return lower, upper


def case_runs(m):
    """Groups a mapping into runs (lo, count, stride, delta): lo, lo+stride, ... map to +delta.
    Stride 2 catches the alternating upper/lower pairs of Latin Extended, Cyrillic, etc."""
    runs = []
    covered = set()
    for lo in sorted(m):
        if lo in covered:
            continue
        delta = m[lo] - lo
        best = (1, 1)
        for stride in (1, 2):
            n = 1
            while (lo + n * stride) in m and (lo + n * stride) not in covered \
                    and m[lo + n * stride] - (lo + n * stride) == delta \
                    and (stride == 1 or (lo + n * stride - 1) not in m):
                n += 1
            if n > best[0]:
                best = (n, stride)
        n, stride = best
        runs.append((lo, n, stride, delta))
        covered.update(lo + k * stride for k in range(n))
    # Verify: every key is covered exactly by one run with the right value.
    cover = {}
    for lo, n, stride, delta in runs:
        for k in range(n):
            cp = lo + k * stride
            assert cp not in cover
            cover[cp] = cp + delta
    assert cover == m, "case runs do not reproduce the mapping"
    # unicode.c bisects on the first code point, so the spans of runs must not interleave.
    runs.sort()
    for a, b in zip(runs, runs[1:]):
        assert a[0] + (a[1] - 1) * a[2] < b[0], "case runs interleave at 0x%x" % b[0]
    return runs


def emit_u32_array(name, values, comment, per_line=8):
    print("/* %s */" % comment)
    print("static const uint32_t %s[%d] = {" % (name, len(values)))
    for i in range(0, len(values), per_line):
        print("    " + ", ".join("0x%x" % v for v in values[i:i + per_line]) + ",")
    print("};")
    print()


def main():
    pv = perl('print Unicode::UCD::UnicodeVersion(), "\\n";').strip()
    if pv != unicodedata.unidata_version:
        sys.exit("gen_unicode.py: Python has Unicode %s but Perl has %s"
                 % (unicodedata.unidata_version, pv))
    cruns = category_runs()
    lower, upper = simple_case_maps()
    lruns, uruns = case_runs(lower), case_runs(upper)
    alpha, lowerp, space = invlist("Alpha"), invlist("Lower"), invlist("XPosixSpace")

    print("/* unicode_tables.h: GENERATED by scripts/gen_unicode.py from Unicode %s "
          "(python3 unicodedata + Perl Unicode::UCD)." % pv)
    print(" * Do not edit; rerun the script.  Included only by src/text/unicode.c. */")
    print("#ifndef NMT_UNICODE_TABLES_H")
    print("#define NMT_UNICODE_TABLES_H")
    print()
    print('#define UNI_TABLES_VERSION "%s"' % pv)
    print()
    emit_u32_array("uni_cat_runs", [(s << 5) | c for s, c in cruns],
                   "General category runs: (first code point << 5) | enum uni_cat; a run lasts "
                   "until the next one starts.")
    for name, runs, what in (("uni_lower_runs", lruns, "lowercase"),
                             ("uni_upper_runs", uruns, "uppercase")):
        print("/* Simple %s mapping: {first, count, stride, delta}: first + k*stride "
              "(k < count) maps to itself + delta. */" % what)
        print("static const struct uni_case_run %s[%d] = {" % (name, len(runs)))
        for lo, n, stride, delta in runs:
            print("    {0x%x, %d, %d, %d}," % (lo, n, stride, delta))
        print("};")
        print()
    emit_u32_array("uni_alpha_inv", alpha, "Alphabetic (Perl \\p{Alpha}) as an inversion list: "
                   "cp is in the set iff the number of entries <= cp is odd.")
    emit_u32_array("uni_lowercase_inv", lowerp, "Lowercase (Perl \\p{Lower}), inversion list.")
    emit_u32_array("uni_space_inv", space, "White_Space (Perl \\s on character strings), "
                   "inversion list.")
    print("#endif")


if __name__ == "__main__":
    main()
