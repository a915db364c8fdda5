"""Language codes of multilingual seq2seq families, from the ISO 639-1 codes the core speaks.

Pages and the CLI name languages by ISO 639-1 ("fr"); each model family spells them its own way:
M2M-100 uses the ISO code itself ("fr", token `__fr__`), NLLB-200 a FLORES-200 code ("fra_Latn"),
mBART-50 a language_REGION code ("fr_XX"). The tables below cover the languages all three share
plus the common ones of each; a code the tokenizer does not know is refused by the backend.
"""

from __future__ import annotations

import re
from typing import Any

M2M100, NLLB, MBART50 = "m2m100", "nllb", "mbart50"

FAMILY_LABELS = {M2M100: "M2M-100", NLLB: "NLLB-200", MBART50: "mBART-50"}

# ISO 639-1 -> FLORES-200 (NLLB-200). Latvian, Persian, Swahili, Malay and Uzbek use the
# macrolanguage's standard variety, as NLLB does (lvs, pes, swh, zsm, uzn).
_NLLB = {
    "af": "afr_Latn", "am": "amh_Ethi", "ar": "arb_Arab", "az": "azj_Latn", "be": "bel_Cyrl", "bg": "bul_Cyrl",
    "bn": "ben_Beng", "bs": "bos_Latn", "ca": "cat_Latn", "cs": "ces_Latn", "cy": "cym_Latn", "da": "dan_Latn",
    "de": "deu_Latn", "el": "ell_Grek", "en": "eng_Latn", "es": "spa_Latn", "et": "est_Latn", "eu": "eus_Latn",
    "fa": "pes_Arab", "fi": "fin_Latn", "fr": "fra_Latn", "ga": "gle_Latn", "gl": "glg_Latn", "gu": "guj_Gujr",
    "ha": "hau_Latn", "he": "heb_Hebr", "hi": "hin_Deva", "hr": "hrv_Latn", "hu": "hun_Latn", "hy": "hye_Armn",
    "id": "ind_Latn", "ig": "ibo_Latn", "is": "isl_Latn", "it": "ita_Latn", "ja": "jpn_Jpan", "jv": "jav_Latn",
    "ka": "kat_Geor", "kk": "kaz_Cyrl", "km": "khm_Khmr", "kn": "kan_Knda", "ko": "kor_Hang", "lo": "lao_Laoo",
    "lt": "lit_Latn", "lv": "lvs_Latn", "mk": "mkd_Cyrl", "ml": "mal_Mlym", "mr": "mar_Deva", "ms": "zsm_Latn",
    "my": "mya_Mymr", "ne": "npi_Deva", "nl": "nld_Latn", "no": "nob_Latn", "pa": "pan_Guru", "pl": "pol_Latn",
    "pt": "por_Latn", "ro": "ron_Latn", "ru": "rus_Cyrl", "si": "sin_Sinh", "sk": "slk_Latn", "sl": "slv_Latn",
    "so": "som_Latn", "sr": "srp_Cyrl", "sv": "swe_Latn", "sw": "swh_Latn", "ta": "tam_Taml", "te": "tel_Telu",
    "th": "tha_Thai", "tl": "tgl_Latn", "tr": "tur_Latn", "uk": "ukr_Cyrl", "ur": "urd_Arab", "uz": "uzn_Latn",
    "vi": "vie_Latn", "xh": "xho_Latn", "yo": "yor_Latn", "zh": "zho_Hans", "zu": "zul_Latn",
}

# ISO 639-1 -> mBART-50 (its 52 languages that have an ISO 639-1 code).
_MBART50 = {
    "af": "af_ZA", "ar": "ar_AR", "az": "az_AZ", "bn": "bn_IN", "cs": "cs_CZ", "de": "de_DE", "en": "en_XX",
    "es": "es_XX", "et": "et_EE", "fa": "fa_IR", "fi": "fi_FI", "fr": "fr_XX", "gl": "gl_ES", "gu": "gu_IN",
    "he": "he_IL", "hi": "hi_IN", "hr": "hr_HR", "id": "id_ID", "it": "it_IT", "ja": "ja_XX", "ka": "ka_GE",
    "kk": "kk_KZ", "km": "km_KH", "ko": "ko_KR", "lt": "lt_LT", "lv": "lv_LV", "mk": "mk_MK", "ml": "ml_IN",
    "mn": "mn_MN", "mr": "mr_IN", "my": "my_MM", "ne": "ne_NP", "nl": "nl_XX", "pl": "pl_PL", "ps": "ps_AF",
    "pt": "pt_XX", "ro": "ro_RO", "ru": "ru_RU", "si": "si_LK", "sl": "sl_SI", "sv": "sv_SE", "sw": "sw_KE",
    "ta": "ta_IN", "te": "te_IN", "th": "th_TH", "tl": "tl_XX", "tr": "tr_TR", "uk": "uk_UA", "ur": "ur_PK",
    "vi": "vi_VN", "xh": "xh_ZA", "zh": "zh_CN",
}


_CODE_SHAPES = {NLLB: re.compile(r"[a-z]{3}_[A-Z][a-z]{3}"), MBART50: re.compile(r"[a-z]{2}_[A-Z]{2}")}


class UnknownLanguageError(ValueError):
    """A language code the model family (or model) cannot use; the message is one sentence."""


def model_language_code(family: str, iso: str) -> str:
    """The family's spelling of ISO 639-1 `iso` ("fr" -> "fr" / "fra_Latn" / "fr_XX").

    M2M-100's codes are ISO 639-1 (plus a few ISO 639-2 codes such as "ast"), so they pass through;
    whether the model really has the language is checked against its tokenizer by the backend.
    """
    code = iso.strip()
    if family == M2M100:
        return code
    table = {NLLB: _NLLB, MBART50: _MBART50}.get(family)
    if table is None:
        raise UnknownLanguageError(f"unknown model family {family!r}; known: {', '.join(FAMILY_LABELS)}")
    if code in table.values():  # already the family's own spelling
        return code
    if code.lower() not in table:
        raise UnknownLanguageError(
            f"{FAMILY_LABELS[family]} has no language {iso!r}; use an ISO 639-1 code such as "
            f"{', '.join(sorted(table)[:6])}, ... ({len(table)} known)."
        )
    return table[code.lower()]


def language_family(model_type: str | None, tokenizer: Any) -> str | None:
    """Which family's codes a checkpoint uses, or None for a model without language codes.

    The tokenizer decides first: NLLB-200 checkpoints have model_type "m2m_100" but an NLLB tokenizer.
    """
    tokenizer_class = type(tokenizer).__name__.lower()
    if "nllb" in tokenizer_class:
        return NLLB
    if "mbart" in tokenizer_class:
        return MBART50
    if "m2m100" in tokenizer_class:
        return M2M100
    return {"m2m_100": M2M100, "nllb-moe": NLLB, "mbart": MBART50}.get(model_type or "")


def family_codes(family: str, tokenizer: Any) -> list[str]:
    """Every language code a tokenizer of `family` knows (M2M-100: its table; NLLB, mBART: by token shape)."""
    if family == M2M100:
        return list(getattr(tokenizer, "lang_code_to_id", {}))
    shape = _CODE_SHAPES[family]
    return [token for token in tokenizer.get_vocab() if shape.fullmatch(token)]
