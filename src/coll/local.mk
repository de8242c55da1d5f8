# src/coll: filled by its owner
