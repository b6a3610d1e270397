"""The ways of playing (shell): drivers of the loop for the keyboard, pipes and the AI alone, the
screen they draw on, and --stats."""
