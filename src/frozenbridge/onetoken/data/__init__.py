"""The one-token study's data: a captioned folder read and checked, folders made from the shapes pictures or a
cached dataset, and every picture's pooled vector through the frozen encoder once."""
