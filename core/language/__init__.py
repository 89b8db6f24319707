"""The page's language: its gettext catalogs, one language per thread (i18n), and one wording for progress."""
