# src/net/verbs: filled by its owner
