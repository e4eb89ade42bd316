"""Pure library layer: torch and transformers only, no CLI, no printing."""
