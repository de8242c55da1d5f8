# src/tools: filled by its owner
