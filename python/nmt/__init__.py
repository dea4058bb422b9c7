"""nmt: attention-based neural machine translation (RNNsearch, Bahdanau et al. 2014) from Python.

The package is a thin layer over libnmt's public C API (the extension ``nmt._nmt``): models are
loaded once and shared by threads, and every call that computes releases the GIL. The names
follow CTranslate2's where the two do the same thing (docs/PYTHON.md, "From CTranslate2")::

    import nmt
    tr = nmt.Translator("model.nmt", threads=2)
    res = tr.translate_batch([["a", "man", "rides", "a", "bike", "."]], beam_size=5,
                             return_scores=True, return_attention=True)
    res[0].hypotheses[0], res[0].scores[0], res[0].attention[0]    # attention: numpy if installed
    tr.translate(["A man rides a bike."])                           # raw text: the model's text stages
    nmt.bleu(hyps, [refs]).score

Errors raise :class:`nmt.Error` (:class:`nmt.ArgumentError` is also a ``ValueError``,
:class:`nmt.FileError` an ``OSError``) carrying libnmt's message.
"""
from __future__ import annotations

import array
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _nmt
from ._nmt import ArgumentError, Error, FileError

try:  # attention matrices and tensors come back as numpy arrays where numpy is importable
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None

__all__ = [
    "Translator", "TranslationResult", "ScoringResult", "AlignmentResult", "BLEUScore", "CHRFScore",
    "train", "train_options", "average", "bleu", "chrf", "tokenize", "detokenize", "load_tensors",
    "Error", "ArgumentError", "FileError", "MAX_SRC_WORDS",
]

MAX_SRC_WORDS: int = _nmt.MAX_SRC_WORDS
"""Longer sources are cut to this many tokens (libnmt's NMT_MAX_SRC_WORDS)."""

PathLike = Union[str, "os.PathLike[str]"]
Matrix = Any  # numpy.ndarray of float32 [rows, cols], or a list of rows of floats without numpy


def _matrix(data: Optional[bytes], rows: int, cols: int) -> Optional[Matrix]:
    """A row-major float32 block as a numpy array (one copy, read-only) or a list of row lists."""
    if data is None:
        return None
    if _np is not None:
        return _np.frombuffer(data, dtype=_np.float32).reshape(rows, cols)
    flat = array.array("f")
    flat.frombytes(data)
    return [flat[i * cols:(i + 1) * cols].tolist() for i in range(rows)]


class TranslationResult(NamedTuple):
    """One source sentence's translations, best first (CTranslate2's TranslationResult).

    hypotheses: the output tokens of each hypothesis (EOS not included).
    scores: each one's ranking score (log-probability, divided by length^length_penalty when
        length-normalised); empty unless return_scores.
    attention: each one's attention, [output tokens (+1 for the EOS when finished)] x [source
        tokens + 1 (the source EOS)]; empty unless return_attention.
    alignments: each one's hard links (source index, target index), each output token to its
        most-attended source token (Pharaoh "s-t" pairs); empty unless return_alignment.
    log_probs: each one's log-probability (not length-normalised).
    """
    hypotheses: List[List[str]]
    scores: List[float]
    attention: List[Matrix]
    alignments: List[List[Tuple[int, int]]]
    log_probs: List[float]


class ScoringResult(NamedTuple):
    """Forced decoding of one pair (CTranslate2's ScoringResult): tokens are the target's and
    "</s>", log_probs the log-probability of each."""
    tokens: List[str]
    log_probs: List[float]


class AlignmentResult(NamedTuple):
    """Forced alignment of one pair: attention [target tokens + 1] x [source tokens + 1] (the
    EOS row and column last; None for an RNNencdec model), the hard links (source, target), and
    log p(target + EOS | source)."""
    attention: Optional[Matrix]
    links: List[Tuple[int, int]]
    log_prob: float


class Translator:
    """A model, or an ensemble of models, loaded once and shared by threads.

    ``Translator(path_or_paths, device="cpu", threads=0, precision="fp32", shortlist=None, ...)``

    path_or_paths: a model file, or several for an ensemble (the same vocabularies; at every step
        a word's score is the weighted mean of the models' log-probabilities).
    device: "cpu", or "devsim" (the simulated device, for tests); the process's device, set
        before the models load (``nmt_set_device``).
    threads: threads of the matrix products and batch loops, for the whole process (0: all cores;
        libnmt's setting is global).
    precision: "fp32", "int8" or "bf16" for the decoder's matrix products (int8 needs
        AVX2, bf16 AVX512_BF16; refused with ArgumentError elsewhere). CTranslate2's
        compute_type "float32" and "int8" are accepted too.
    shortlist: a lexical table from ``nmt lex``, or (path, K, F): decode over the K best
        translations of the source words and the F most frequent target words (default 100, 100).
    weights: an ensemble's weights, one per model (default equal).
    unk_lexicon: a lexical table for UNK replacement (``translate_batch(replace_unknowns=True)``).
    tokenize, detokenize, lowercase, normalize_punct: text stages of ``translate`` for a model of
        text tokenized outside (a model trained on raw text or subwords applies its own).
    """

    def __init__(self, path_or_paths: Union[PathLike, Sequence[PathLike]], device: str = "cpu", threads: int = 0,
                 precision: str = "fp32", shortlist: Union[None, PathLike, Tuple[PathLike, int, int]] = None,
                 weights: Optional[Sequence[float]] = None, unk_lexicon: Optional[PathLike] = None,
                 tokenize: Optional[str] = None, detokenize: Optional[str] = None, lowercase: bool = False,
                 normalize_punct: bool = False, compute_type: Optional[str] = None) -> None:
        if device != "cpu":
            _nmt.set_device(device)  # the process's device, before the models are loaded
        if isinstance(path_or_paths, (str, os.PathLike)):
            path_or_paths = [path_or_paths]
        paths = [os.fspath(p) for p in path_or_paths]
        if compute_type is not None:
            precision = {"float32": "fp32", "default": "fp32", "auto": "fp32", "int8": "int8",
                         "bfloat16": "bf16"}.get(compute_type, compute_type)
        if not isinstance(threads, int) or threads < 0:
            raise ArgumentError(f"threads {threads!r}: expected an integer >= 0")
        if threads:
            _set_threads(threads)
        sl, k, f = (None, 100, 100)
        if isinstance(shortlist, tuple):
            sl, k, f = os.fspath(shortlist[0]), int(shortlist[1]), int(shortlist[2])
        elif shortlist is not None:
            sl = os.fspath(shortlist)
        self._t = _nmt.Translator(paths, None if weights is None else [float(w) for w in weights], precision, sl, k, f,
                                  None if unk_lexicon is None else os.fspath(unk_lexicon), tokenize, detokenize,
                                  lowercase, normalize_punct)
        self.model_paths = paths

    @property
    def info(self) -> Dict[str, Any]:
        """The first model's architecture and vocabulary sizes, the number of models, parameters."""
        return self._t.info()

    @staticmethod
    def _options(beam_size: Optional[int], num_hypotheses: int, length_penalty: float, max_decoding_length: int,
                 sampling_topk: int, sampling_topp: float, sampling_temperature: float, extra: Mapping[str, Any]
                 ) -> Dict[str, Any]:
        """The extension's options from CTranslate2's names: sampling when sampling_topk != 1 or
        sampling_topp < 1 (topk 0: the whole distribution)."""
        sample = sampling_topk != 1 or sampling_topp < 1
        o: Dict[str, Any] = {"num_hypotheses": num_hypotheses, "max_decoding_length": max_decoding_length,
                             "sampling": sample}
        if beam_size is not None:
            if sample:
                raise ArgumentError("sampling draws instead of searching: beam_size does not apply")
            o["beam_size"] = beam_size
        if length_penalty == 0:
            o["normalize"] = False
        else:
            o["length_penalty"] = float(length_penalty)
        if sample:
            o.update(sampling_topk=0 if sampling_topk == 1 else sampling_topk, sampling_topp=float(sampling_topp),
                     sampling_temperature=float(sampling_temperature))
        for name, value in extra.items():
            if name not in ("max_ratio", "seed", "no_unk", "batch_size", "normalize"):
                raise TypeError(f"unexpected keyword argument '{name}'")
            o[name] = value
        return o

    def translate_batch(self, source: Sequence[Sequence[str]], beam_size: Optional[int] = None,
                        num_hypotheses: int = 1, length_penalty: float = 1.0, max_decoding_length: int = 0,
                        return_scores: bool = False, return_attention: bool = False, return_alignment: bool = False,
                        sampling_topk: int = 1, sampling_topp: float = 1.0, sampling_temperature: float = 1.0,
                        replace_unknowns: bool = False, target_prefix: Optional[Sequence[Optional[Sequence[str]]]] = None,
                        constraints: Optional[Sequence[Optional[Sequence[Sequence[str]]]]] = None,
                        **options: Any) -> List[TranslationResult]:
        """Translates token lists (the model's tokens: words, or a subword model's pieces).

        beam_size: the beam (default libnmt's 12, as ``nmt translate``; 1 = greedy).
        num_hypotheses: hypotheses per sentence (at most the beam; with sampling, the draws).
        length_penalty: rank by log-probability / length^length_penalty (EOS counted); 0 ranks by
            log-probability (``nmt translate --no-length-norm``).
        max_decoding_length: at most this many tokens in each hypothesis, EOS counted and a
            target_prefix's tokens too (as CTranslate2 counts them), whatever the source's length
            (0: only libnmt's limit of 3 x (source tokens + 1), which max_ratio= changes).
        sampling_topk, sampling_topp, sampling_temperature: draw translations instead of
            searching (CTranslate2's meaning: sampling_topk 1 is search; 0 draws from the whole
            distribution); seed= fixes the draws (default 1).
        replace_unknowns: replace each output <unk> by the Translator's unk_lexicon translation of
            the most-attended source token, or by that token.
        target_prefix: per sentence, target tokens its translations must begin with (None or []
            for none): forced, then searched on; the prefix's log-probability is in the scores.
        constraints: per sentence, phrases (each a list of target tokens) that must each appear in
            its translations (None or [] for none): lexically constrained decoding by dynamic beam
            allocation (Post & Vilar 2018), as ``nmt translate --constraints``.
        no_unk=True never generates <unk>; batch_size= sentences decoded together (64).
        """
        o = self._options(beam_size, num_hypotheses, length_penalty, max_decoding_length, sampling_topk, sampling_topp,
                          sampling_temperature, options)
        if target_prefix is not None:
            o["target_prefix"] = [p if p is not None else [] for p in target_prefix]
        if constraints is not None:
            o["constraints"] = [c if c is not None else [] for c in constraints]
        out = self._t.translate_batch(source, return_attention=return_attention, return_alignment=return_alignment,
                                      unk_replace=replace_unknowns, **o)
        return [TranslationResult(
            hypotheses=[h[0] for h in hyps],
            scores=[h[1] for h in hyps] if return_scores else [],
            attention=[_matrix(h[3], h[4], h[5]) for h in hyps] if return_attention else [],
            alignments=[[tuple(p) for p in h[6]] if h[6] is not None else [] for h in hyps] if return_alignment else [],
            log_probs=[h[2] for h in hyps]) for hyps in out]

    def translate(self, texts: Sequence[str], beam_size: Optional[int] = None, num_hypotheses: int = 1,
                  length_penalty: float = 1.0, max_decoding_length: int = 0, return_scores: bool = False,
                  **options: Any) -> Union[List[str], List[List[Tuple[str, float]]]]:
        """Translates raw text lines as ``nmt translate`` does: each line through the model's own
        text stages (a model trained with --tokenize or --subwords), or the ones this Translator
        was given, then the output joined, detokenized where the stages say so.

        Returns one str per line, or, with num_hypotheses > 1 or return_scores, a list of
        (text, score) per line, best first. Options as translate_batch's.
        """
        o = self._options(beam_size, num_hypotheses, length_penalty, max_decoding_length,
                          options.pop("sampling_topk", 1), options.pop("sampling_topp", 1.0),
                          options.pop("sampling_temperature", 1.0), options)
        out = self._t.translate(texts, **o)
        if num_hypotheses > 1 or return_scores:
            return [[(text, score) for text, score in hyps] for hyps in out]
        return [hyps[0][0] if hyps else "" for hyps in out]

    def score_batch(self, source: Sequence[Sequence[str]], target: Sequence[Sequence[str]]) -> List[ScoringResult]:
        """Forced decoding: the log-probability of each target token and its EOS given the source
        (an ensemble's: the weighted sum of its models'), as ``nmt score`` sums them."""
        out = self._t.force(source, target)
        return [ScoringResult(tokens=list(t) + ["</s>"], log_probs=r[1]) for t, r in zip(target, out)]

    def align(self, source: Sequence[Sequence[str]], target: Sequence[Sequence[str]]) -> List[AlignmentResult]:
        """Forced alignment (``nmt align``): the attention the model gives each target token while
        made to produce the target, and the hard links from it."""
        return [AlignmentResult(attention=_matrix(r[2], r[3], r[4]), links=[tuple(p) for p in r[5]], log_prob=r[0])
                for r in self._t.force(source, target)]


def _set_threads(n: int) -> None:
    """libnmt's thread count for the process (nmt_set_threads)."""
    _nmt.set_threads(n)


# ---------------------------------------------------------------------------------- metrics

@dataclass
class BLEUScore:
    """sacreBLEU's BLEUScore fields: score (0..100), counts / totals (clipped n-gram matches and
    hypothesis n-grams, n = 1..4), precisions (percent), bp (brevity penalty), sys_len, ref_len."""
    score: float
    counts: List[float]
    totals: List[float]
    precisions: List[float]
    bp: float
    sys_len: int
    ref_len: int

    def __str__(self) -> str:
        p = "/".join(f"{x:.1f}" for x in self.precisions)
        return (f"BLEU = {self.score:.2f} {p} (BP = {self.bp:.3f} ratio = {self.sys_len / max(self.ref_len, 1):.3f} "
                f"hyp_len = {self.sys_len} ref_len = {self.ref_len})")


@dataclass
class CHRFScore:
    """sacreBLEU's CHRFScore fields: chrF2 with character n-grams of orders 1..6, no word n-grams."""
    score: float
    char_order: int = 6
    word_order: int = 0
    beta: int = 2

    def __str__(self) -> str:
        return f"chrF2 = {self.score:.2f}"


def _refs(refs: Sequence[Sequence[str]]) -> Sequence[Sequence[str]]:
    if isinstance(refs, str) or (len(refs) and isinstance(refs[0], str)):
        raise ArgumentError("references: give a list of reference sets, each a list of lines (sacreBLEU's order)")
    return refs


def bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], tokenize: str = "13a",
         lowercase: bool = False) -> BLEUScore:
    """Corpus BLEU as sacreBLEU's ``corpus_bleu(hypotheses, references, tokenize=, lowercase=)``
    computes it (exp smoothing); references is a list of reference sets (one per reference),
    each as long as hypotheses. tokenize: "13a", "intl" or "none"."""
    return BLEUScore(**_nmt.score(hypotheses, _refs(references), "bleu", tokenize, lowercase))


def chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]], lowercase: bool = False) -> CHRFScore:
    """Corpus chrF2 as sacreBLEU's ``corpus_chrf(hypotheses, references)`` computes it."""
    return CHRFScore(_nmt.score(hypotheses, _refs(references), "chrf", None, lowercase))


# ---------------------------------------------------------------------------------- text

def tokenize(text: str, lang: str = "en", lowercase: bool = False, normalize_punct: bool = False,
             aggressive: bool = False, escape: bool = True) -> List[str]:
    """Moses tokenizer.perl's tokens of one line (``nmt tokenize -l LANG``; en, fr or de):
    lowercase.perl and normalize-punctuation.perl first if asked, -a with aggressive,
    -no-escape with escape=False."""
    return _nmt.tokenize(text, lang, lowercase, normalize_punct, aggressive, escape)


def detokenize(tokens: Union[str, Sequence[str]], lang: str = "en") -> str:
    """Moses detokenizer.perl's line (``nmt detokenize -l LANG``) of tokens (a list, or a str of
    tokens separated by spaces)."""
    if isinstance(tokens, str):
        tokens = tokens.split()
    return _nmt.detokenize(tokens, lang)


# ---------------------------------------------------------------------------------- model files

def load_tensors(path: PathLike) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """A model (or checkpoint) file's parameters and configuration: a dict of tensors by the
    names of docs/MODEL-MAP.md (float32 numpy arrays, or nested lists without numpy), in file
    order, and the config (arch, vocabulary sizes, emb, hid, att, maxout, ...)."""
    tensors, config = _nmt.load_tensors(os.fspath(path))
    out: Dict[str, Any] = {}
    for name, shape, data in tensors:
        rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
        m = _matrix(data, rows, cols)
        out[name] = m if len(shape) == 2 else (m.reshape(cols) if _np is not None else m[0])
    return out, config


def average(paths: Sequence[PathLike], output: PathLike) -> None:
    """Checkpoint averaging (``nmt average``): writes to output the model whose every parameter
    is the mean over the model files (one configuration, the same vocabularies)."""
    _nmt.average([os.fspath(p) for p in paths], os.fspath(output))


# ---------------------------------------------------------------------------------- training

def train_options() -> List[str]:
    """The option names train() takes: ``nmt train``'s long options (underscores work too)."""
    return _nmt.train_keys()


def train(config: Union[Mapping[str, Any], PathLike], callback: Optional[Callable[[Dict[str, Any]], Any]] = None,
          stop: Any = None) -> bool:
    """Trains a model as ``nmt train -c run.yaml`` does with the same keys (``nmt train --help``
    lists them; a value as YAML would give it: numbers, True/False for switches, a str or list
    for tokenize, lang, spm-model and valid-metrics). A YAML file's path may be given instead (it
    needs PyYAML). preset is applied first, as on the command line.

    callback(report) is called with a dict at the start, every half second or 50 updates of
    progress (kind "progress": update, epoch, cost, grad_norm, tok_per_s, eta), at each
    validation (kind "valid": dev_nll, dev_ppl, dev_bleu, dev_chrf, improved, lr), at each save
    and at the end; a true return value asks training to stop, as does stop.is_set() (a
    threading.Event set from another thread), an exception raised in the callback (re-raised
    here) or Ctrl-C: libnmt then writes a checkpoint (resume with {"resume": checkpoint}).
    Returns True when training ended by its limits, False when it was stopped.
    """
    if not isinstance(config, Mapping):
        import yaml  # only for a file name
        with open(config, encoding="utf-8") as f:
            config = yaml.safe_load(f)
    return _nmt.train(dict(config), callback, stop)
