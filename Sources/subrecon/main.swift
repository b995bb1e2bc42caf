print("subrecon")
