// spm.cc: the C interface of spm.h over SentencePiece's C++ API (sentencepiece::
// SentencePieceProcessor to segment and join, sentencepiece::SentencePieceTrainer to train).
// The project's one C++ file: every entry point catches what the C++ side may throw (bad_alloc
// above all) and turns it into an nmt status, so that no exception reaches C code.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

extern "C" {
#include "base/err.h"
}
#include "text/spm.h"

struct spm {
    sentencepiece::SentencePieceProcessor sp;
    std::string bytes; // the serialized model as loaded: what a model file stores
};

// Grows a malloc'ed buffer to hold need elements of elem bytes; false without memory.
static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = std::realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

int spm_load(spm **out, const void *bytes, size_t len, const char *what, nmt_err *err)
{
    *out = nullptr;
    try {
        spm *s = new spm;
        s->bytes.assign(static_cast<const char *>(bytes), len);
        auto st = s->sp.LoadFromSerializedProto(s->bytes);
        if (!st.ok()) {
            delete s;
            return nmt_fail(err, NMT_ERR_FORMAT, "%s is not a valid SentencePiece model (%s)", what, st.error_message());
        }
        if (s->sp.GetPieceSize() < 1) {
            delete s;
            return nmt_fail(err, NMT_ERR_FORMAT, "%s has no pieces", what);
        }
        *out = s;
        return NMT_OK;
    } catch (const std::bad_alloc &) {
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while loading %s", what);
    } catch (...) {
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: SentencePiece failed to load it", what);
    }
}

void spm_free(spm *s) { delete s; }

int spm_size(const spm *s) { return s->sp.GetPieceSize(); }
const char *spm_piece(const spm *s, int id) { return s->sp.IdToPiece(id).c_str(); }
int spm_unk_id(const spm *s) { return s->sp.unk_id(); }

int spm_kind(const spm *s, int id)
{
    if (s->sp.IsUnknown(id)) return SPM_UNKNOWN;
    if (s->sp.IsControl(id)) return SPM_CONTROL;
    if (s->sp.IsUnused(id)) return SPM_UNUSED;
    if (s->sp.IsByte(id)) return SPM_BYTE;
    return SPM_NORMAL;
}

const void *spm_bytes(const spm *s, size_t *len)
{
    *len = s->bytes.size();
    return s->bytes.data();
}

void spm_seg_free(spm_seg *g)
{
    std::free(g->id);
    std::free(g->begin);
    std::free(g->end);
    *g = spm_seg();
}

// The three arrays of g with room for need pieces (they always have the same capacity).
static bool seg_reserve(spm_seg *g, size_t need)
{
    if (need <= g->cap) return true;
    size_t c = g->cap, c2 = g->cap, c3 = g->cap;
    bool ok = grow(reinterpret_cast<void **>(&g->id), &c, need, sizeof(int)) &&
              grow(reinterpret_cast<void **>(&g->begin), &c2, need, sizeof(int)) &&
              grow(reinterpret_cast<void **>(&g->end), &c3, need, sizeof(int));
    if (ok) g->cap = c;
    return ok;
}

// Copies the spans of the pieces of seg into g.
static bool copy_spans(const sentencepiece::ImmutableSentencePieceText &seg, spm_seg *g)
{
    size_t n = seg.pieces_size();
    if (!seg_reserve(g, n + 1)) return false;
    for (size_t k = 0; k < n; k++) {
        auto p = seg.pieces(static_cast<int>(k));
        g->id[k] = static_cast<int>(p.id());
        g->begin[k] = static_cast<int>(p.begin());
        g->end[k] = static_cast<int>(p.end());
    }
    g->n = static_cast<int>(n);
    return true;
}

int spm_encode(const spm *s, const char *text, size_t len, spm_seg *g, nmt_err *err)
{
    g->n = 0;
    try {
        // the status is kept (the ...AsImmutableProto shortcut drops it)
        sentencepiece::ImmutableSentencePieceText seg;
        auto st = s->sp.Encode(std::string_view(text, len), seg.mutable_proto());
        if (!st.ok()) return nmt_fail(err, NMT_ERR_FORMAT, "SentencePiece cannot segment the line: %s", st.error_message());
        if (!copy_spans(seg, g)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        return NMT_OK;
    } catch (const std::bad_alloc &) {
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while segmenting");
    }
}

int spm_decode(const spm *s, const int *ids, int n, char **buf, size_t *cap, size_t *len, spm_seg *spans, nmt_err *err)
{
    *len = 0;
    try {
        std::vector<int> v(ids, ids + n);
        sentencepiece::ImmutableSentencePieceText seg;
        auto st = s->sp.Decode(v, seg.mutable_proto());
        if (!st.ok()) return nmt_fail(err, NMT_ERR_ARG, "SentencePiece cannot join the pieces: %s", st.error_message());
        const std::string &text = seg.text();
        if (!grow(reinterpret_cast<void **>(buf), cap, text.size() + 1, 1) || (spans && !copy_spans(seg, spans)))
            return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        std::memcpy(*buf, text.c_str(), text.size() + 1);
        *len = text.size();
        // Byte pieces spell any byte: <0x0A> would split the output line, <0x00> end it (the line
        // readers refuse NUL). A control character is not text: each becomes a space (the blank it
        // most often is), which keeps every piece's span where it was.
        for (size_t i = 0; i < *len; i++)
            if (static_cast<unsigned char>((*buf)[i]) < 0x20 || (*buf)[i] == 0x7F) (*buf)[i] = ' ';
        return NMT_OK;
    } catch (const std::bad_alloc &) {
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while joining pieces");
    }
}

// ------------------------------------------------------------------ training

// The trainer pulls its sentences from here: the caller's lines, without a temporary file.
class line_iterator : public sentencepiece::SentenceIterator {
  public:
    line_iterator(const char *const *lines, long n) : lines_(lines), n_(n) { load(); }
    bool done() const override { return i_ >= n_; }
    void Next() override { i_++; load(); }
    const std::string &value() const override { return cur_; }
    sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

  private:
    void load() { if (i_ < n_) cur_.assign(lines_[i_]); }
    const char *const *lines_;
    long n_, i_ = 0;
    std::string cur_;
};

int spm_train(const char *const *lines, long n_lines, int type, int vocab_size, int threads, unsigned seed,
              char **model, size_t *len, nmt_err *err)
{
    *model = nullptr;
    *len = 0;
    if (type != SPM_UNIGRAM && type != SPM_BPE) return nmt_fail(err, NMT_ERR_ARG, "unknown subword model type %d", type);
    try {
        // The ids nmt's vocabularies use (EOS 0, UNK 1) become SentencePiece's own, so that
        // its pieces and the model's vocabulary line up one for one.
        std::unordered_map<std::string, std::string> kw = {
            {"model_type", type == SPM_BPE ? "bpe" : "unigram"},
            {"vocab_size", std::to_string(vocab_size)},
            {"eos_id", "0"}, {"unk_id", "1"}, {"bos_id", "-1"}, {"pad_id", "-1"},
            {"eos_piece", "</s>"}, {"unk_piece", "<unk>"},
            {"byte_fallback", "true"},
            {"hard_vocab_limit", "false"},
            {"normalization_rule_name", "identity"},
            {"num_threads", std::to_string(threads > 0 ? threads : 1)},
            {"input_sentence_size", "0"},
            {"minloglevel", "2"}, // its progress lines would go to stderr: the library never prints
        };
        sentencepiece::SetRandomGeneratorSeed(seed);
        line_iterator it(lines, n_lines);
        std::string out;
        auto st = sentencepiece::SentencePieceTrainer::Train(kw, &it, &out);
        // its message for too small a vocabulary names a source line and options nmt does not
        // have: keep its numbers, give nmt's advice
        std::string m = st.ok() ? "" : st.error_message();
        size_t from = m.find("Vocabulary size is smaller"), to = m.find(" Increase");
        if (from != std::string::npos)
            return nmt_fail(err, NMT_ERR_ARG, "SentencePiece training failed: %s (each character the text keeps "
                            "needs a piece of its own: raise --subword-vocab)", m.substr(from, to == std::string::npos ? to : to - from).c_str());
        if (!st.ok()) return nmt_fail(err, NMT_ERR_ARG, "SentencePiece training failed: %s", st.error_message());
        *model = static_cast<char *>(std::malloc(out.size() ? out.size() : 1));
        if (!*model) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        std::memcpy(*model, out.data(), out.size());
        *len = out.size();
        return NMT_OK;
    } catch (const std::bad_alloc &) {
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while training the subword model");
    } catch (...) {
        return nmt_fail(err, NMT_ERR_ARG, "SentencePiece training failed");
    }
}
