TESTS += 
