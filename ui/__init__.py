"""Streamlit helpers shared by app.py and the pages (the core never imports this)."""
