/* fault.h: fault-injection switches for the gradient-check self-test. In the float64 test build
 * (NMT_FAULTS) a test sets nmt_fault to drop one chosen backward term and checks that the
 * finite-difference check then fails; in every other build FAULT(k) is the constant 0. */
#ifndef NMT_FAULT_H
#define NMT_FAULT_H

#ifdef NMT_FAULTS
extern int nmt_fault;
extern double nmt_fert_eps; /* FertDec's norm smoothing (decoder.c), widened to check its inside */
#define FAULT(k) (nmt_fault == (k))
#else
#define FAULT(k) 0
#endif

enum {
    FAULT_GRU_RESET_PATH = 1,   /* gru_backward: drop dh_prev += dq∘r */
    FAULT_ATTN_SOFTMAX = 2,     /* attn_backward: drop the -Σα dα term of the softmax Jacobian */
    FAULT_DEC_CTX_GRU = 3,      /* dec_backward: drop the GRU's share of dc_i (dA·C^T) */
    FAULT_OUT_BIAS = 4,         /* out_backward: drop the gradient of the maxout bias b_o */
    FAULT_ENC_CARRY = 5,        /* gru_backward: padding rows do not pass their gradient back */
    FAULT_RECATT_PREV = 6,      /* dec_backward: RecAtt's query does not send gradient to c_{i-1} */
    FAULT_LOCFER_SUM = 7,       /* dec_backward: LocFer's ξ sends gradient to α_{i-1} only */
    FAULT_FERTDEC_LEFT = 8,     /* dec_backward: FertDec's left-over cost has no gradient */
    FAULT_LABEL_SMOOTHING = 9,  /* out_backward: the softmax gradient of the plain NLL under smoothing */
    FAULT_DROP_EMB = 10,        /* enc_backward: the source embeddings' gradient misses the dropout mask */
    FAULT_DROP_RNN = 11,        /* gru_backward: the recurrent products' share of dh_prev misses the mask */
    FAULT_TIED_OUT = 12,        /* out_backward: tied Et gets the embedding's gradient only, not the softmax's */
    FAULT_GUIDED = 13,          /* dec_backward: guided alignment's cost sends no gradient to α */
    FAULT_TF_RESIDUAL = 14,     /* tf_layer.c: a pre-norm block's gradient skips the residual path */
    FAULT_TF_KEYS = 15,         /* tf_layer.c: attention sends no gradient to its keys */
    FAULT_TF_CROSS = 16,        /* tf_layer.c: encoder-decoder attention sends no gradient to the encoder */
    FAULT_TF_NORM = 17,         /* tf_layer.c: a post-norm block's norm passes its gradient through unchanged */
    FAULT_TF_POS = 18,          /* transformer.c: learned positions get no gradient */
    FAULT_TF_FFN = 19,          /* tf_layer.c: the feed-forward's inner bias gets no gradient */
    FAULT_TF_SSRU = 20,         /* transformer.c: an SSRU cell's gradient does not reach the previous cell */
    FAULT_TF_GUIDED = 21        /* tf_layer.c: guided alignment's cost sends no gradient to its head's weights */
};

#endif
