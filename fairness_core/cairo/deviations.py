"""Where this project's CAIRO departs from the paper (Zayed et al. 2024) and from the authors' released code: one
sentence each, shown on the page (and said in docs/cairo.md)."""

DEVIATIONS = (
    "Eq. 1's expectation over prompts is taken inside each subgroup (BOLD's prompts differ per subgroup; they are "
    "not one template filled per subgroup).",
    "Offline, bias is measured with the alt-profanity-check offensive-language probability of the continuation, "
    "not the paper's BERT toxicity classifier (any registry scorer can be chosen when it is available).",
    "The shipped run's systems are decoding configurations of one model (SmolLM2-135M-Instruct), not the paper's "
    "ten pretrained models, with a seeded subsample of prompts per subgroup, one seed and 16 new tokens (paper: all "
    "prompts, 5 seeds, 25 tokens).",
    "A combination's bias is, by default, the prompt-count-weighted mean of its distinct sets' biases, searched over "
    "every pair of same-size combinations; the authors' released code (collect_results.py) instead recomputes Eq. 1 "
    "on the pooled generations of the combined sets, lets a set repeat (combinations_with_replacement) and uses the "
    "same combination for both metrics — choose 'released code' under Combination search to get that (seeds are "
    "pooled there too; the released code averages per-seed biases).",
    "Eq. 1's 95% interval is Welch's t interval of each signed subgroup gap (prompts resampled by design, not "
    "bootstrapped) folded at zero, because a percentile bootstrap of a sum of absolute gaps never covers a zero "
    "bias and under-covers at 4 prompts per subgroup; with fewer than 2 prompts in a subgroup no interval is shown. "
    "The fold makes it over-cover by design (0.954–0.986 in simulation at 2 subgroups × 4 prompts) and, at 4 prompts "
    "per subgroup, it rarely detects a gap (none of the 96 rows of the shipped run).",
    "A system is decoded exactly as written: a knob left out stays off (top_p and top_k off, temperature 1), "
    "nothing is added; the provenance lists every knob.",
    "Held-out r (leave-one-system-out and a prompt split) and the permutation p-value that redoes the search are "
    "additions: the paper selects and reports in-sample.",
    "The project ships BOLD gender and religion and HONEST valid/test of the released prompts; HolisticBias has "
    "no released paraphrases, so its sets come from the paraphrasing job here.",
    "Paraphrases made here are cleaned (first line, numbering and quotes removed) and dropped when they lose the "
    "subgroup term, copy the original or are empty (counted); the paper describes no filter.",
)
