print("colony-bench: coming")
