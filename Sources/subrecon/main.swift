print("subrecon: integration in progress")
