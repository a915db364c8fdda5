"""Template adaptation page, "Import templates" tab: read an EEC or IPTTS file and show what it holds."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import adaptation
from ui import common


def import_tab_view() -> None:
    st.markdown("Read the Equity Evaluation Corpus CSV (`ID,Sentence,Template,Person,Gender,Race,Emotion,"
                "Emotion word`) or the IPTTS bias-madlibs CSV (`Text,Label,Template`) and see what it holds.")
    fmt = st.radio("Format", ["eec", "iptts"], horizontal=True, key="ta_import_format",
                   format_func={"eec": "EEC", "iptts": "IPTTS (bias madlibs)"}.get)
    template_file = st.file_uploader("Template file (CSV)", type=["csv"], key="ta_import_upload")
    if template_file is not None:
        try:
            imported = adaptation.import_templates(fmt, template_file.name, template_file.getvalue())
        except adaptation.TemplateImportError as error:
            st.error(common.escape_markdown(str(error)))
        else:
            found = imported.summary()
            st.success(common.escape_markdown(f"{found['n_rows']} rows, {found['n_templates']} templates."))
            for attribute, groups in found["groups"].items():
                st.dataframe(pd.DataFrame({"group": list(groups), "rows": list(groups.values())}), hide_index=True,
                             key=f"ta_import_groups_{attribute}")
            for note in imported.notes:
                st.caption(common.escape_markdown(note))
            st.dataframe(pd.DataFrame([{"template_id": t.template_id, "template": t.text}
                                       for t in imported.templates.templates[:200]]), hide_index=True,
                         key="ta_import_templates")
