"""Opens the example page in headless Chromium, changes rows with psql, and checks that the
page shows each change within 2 s (server-sent events from `database.observe`). Run by
Examples/check-page, which starts the database and the server."""
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

page, database, schema, screenshot = sys.argv[1:5]


def psql(sql):
    subprocess.run(["psql", database, "-q", "-v", "ON_ERROR_STOP=1", "-c", f"SET search_path TO {schema}; {sql}"],
                   check=True, stdout=subprocess.DEVNULL)


def lines(driver):
    # Read in one script: the list is replaced whole on every event.
    return driver.execute_script("return [...document.querySelectorAll('#people li')].map((item) => item.textContent)")


def wait_for(driver, test, what, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if test(lines(driver)):
            return time.monotonic() - start
        time.sleep(0.02)
    raise SystemExit(f"FAIL: the page did not show {what} within {limit} s; it shows {lines(driver)}")


options = Options()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=720,420"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get(page)
    wait_for(driver, lambda shown: "Ada Lovelace — Countess" in shown, "the people", 10)
    steps = [
        ("INSERT INTO person (firstname, surname) VALUES ('Katherine', 'Johnson')",
         lambda shown: "Katherine Johnson" in shown, "a new person"),
        ("INSERT INTO person_title_rel SELECT id, 3 FROM person WHERE surname = 'Johnson'",
         lambda shown: "Katherine Johnson — Doctor" in shown, "a title given"),
        ("UPDATE title SET name = 'Dr.' WHERE id = 3",
         lambda shown: "Katherine Johnson — Dr." in shown and "Grace Hopper — Rear Admiral, Dr." in shown, "a title renamed"),
        ("UPDATE person SET surname = 'King' WHERE id = 1",
         lambda shown: "Ada King — Countess" in shown, "a surname changed"),
        ("DELETE FROM person_title_rel WHERE person_id = 1",
         lambda shown: "Ada King" in shown, "a title taken away"),
    ]
    for sql, test, what in steps:
        psql(sql)
        seconds = wait_for(driver, test, what, 2)
        print(f"ok: {what} shown after {seconds * 1000:.0f} ms")
    driver.save_screenshot(screenshot)
    print(f"screenshot: {screenshot}")
finally:
    driver.quit()
